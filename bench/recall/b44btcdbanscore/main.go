// Project: btcsuite/btcd (full-node bitcoin implementation), connmgr package,
// code unchanged from 2016 (PR #611, moved to connmgr in PR #830) to 2020.
// Files/functions: connmgr/dynamicbanscore.go: DynamicBanScore.String,
// DynamicBanScore.Int, Increase, int, increase, decayFactor; server.go:
// serverPeer.addBanScore, the peer's ban score field.
// Issue/PR: btcsuite/btcd#1510 "DynamicBanScore String() Deadlock", fixed by
// PR #1509 "BUG:dynamicbanscore deadlock" (ported to dcrd as PR #2114
// "connmgr: Fix dynamic ban score stringer deadlock").
//
// DynamicBanScore protects its persistent and decaying components with an
// unexported sync.Mutex. Its exported accessors (Int, Increase, Reset) each
// take the mutex around an unexported helper that does the work. String, the
// fmt.Stringer used whenever a ban score is formatted with %v or %s, takes the
// mutex and then, while building the Sprintf arguments, calls the exported
// Int instead of the unexported int, so it locks the same non-reentrant
// mutex a second time and the goroutine formatting the score hangs forever
// (and with it every later Increase for that peer). The fix calls
// s.int(time.Now()) inside String; the PR added a test that increases a score
// and logs bs.String(); main does the same through a %v debug line.
package main

import (
	"fmt"
	"math"
	"sync"
	"time"
)

const (
	// Halflife defines the time (in seconds) by which the transient part
	// of the ban score decays to one half of it's original value.
	Halflife = 60

	lambda          = math.Ln2 / Halflife
	Lifetime        = 1800
	precomputedLen  = 64
	defaultBanLimit = 100
)

var precomputedFactor [precomputedLen]float64

func init() {
	for i := range precomputedFactor {
		precomputedFactor[i] = math.Exp(-1.0 * float64(i) * lambda)
	}
}

func decayFactor(t int64) float64 {
	if t < precomputedLen {
		return precomputedFactor[t]
	}
	return math.Exp(-1.0 * float64(t) * lambda)
}

// DynamicBanScore provides dynamic ban scores consisting of a persistent and a
// decaying component.
type DynamicBanScore struct {
	lastUnix   int64
	transient  float64
	persistent uint32
	mtx        sync.Mutex
}

// String returns the ban score as a human-readable string.
func (s *DynamicBanScore) String() string {
	s.mtx.Lock()
	r := fmt.Sprintf("persistent %v + transient %v at %v = %v as of now",
		s.persistent, s.transient, s.lastUnix, s.Int())
	s.mtx.Unlock()
	return r
}

// Int returns the current ban score, the sum of the persistent and decaying
// scores.
//
// This function is safe for concurrent access.
func (s *DynamicBanScore) Int() uint32 {
	s.mtx.Lock()
	r := s.int(time.Now())
	s.mtx.Unlock()
	return r
}

// Increase increases both the persistent and decaying scores by the values
// passed as parameters. The resulting score is returned.
//
// This function is safe for concurrent access.
func (s *DynamicBanScore) Increase(persistent, transient uint32) uint32 {
	s.mtx.Lock()
	r := s.increase(persistent, transient, time.Now())
	s.mtx.Unlock()
	return r
}

// int returns the ban score, the sum of the persistent and decaying scores at a
// given point in time.
//
// This function is not safe for concurrent access.
func (s *DynamicBanScore) int(t time.Time) uint32 {
	dt := t.Unix() - s.lastUnix
	if s.transient < 1 || dt < 0 || Lifetime < dt {
		return s.persistent
	}
	return s.persistent + uint32(s.transient*decayFactor(dt))
}

// increase increases the persistent, the decaying or both scores by the values
// passed as parameters.
//
// This function is not safe for concurrent access.
func (s *DynamicBanScore) increase(persistent, transient uint32, t time.Time) uint32 {
	s.persistent += persistent
	tu := t.Unix()
	dt := tu - s.lastUnix

	if transient > 0 {
		if Lifetime < dt {
			s.transient = 0
		} else if s.transient > 1 && dt > 0 {
			s.transient *= decayFactor(dt)
		}
		s.transient += float64(transient)
		s.lastUnix = tu
	}
	return s.persistent + uint32(s.transient)
}

// ---- server.go ----

type serverPeer struct {
	addr     string
	inbound  bool
	banScore DynamicBanScore
}

func (sp *serverPeer) String() string {
	dir := "outbound"
	if sp.inbound {
		dir = "inbound"
	}
	return fmt.Sprintf("%s (%s)", sp.addr, dir)
}

type logger struct{ prefix string }

func (l logger) Warnf(format string, args ...interface{}) {
	fmt.Println(l.prefix + " [WRN] " + fmt.Sprintf(format, args...))
}

func (l logger) Debugf(format string, args ...interface{}) {
	fmt.Println(l.prefix + " [DBG] " + fmt.Sprintf(format, args...))
}

var peerLog = logger{prefix: "PEER:"}

// addBanScore increases the persistent and decaying ban score fields by the
// values passed as parameters. If the resulting score exceeds half of the ban
// threshold, a warning is logged including the reason provided. Further, if
// the score is above the ban threshold, the peer will be banned and
// disconnected.
func (sp *serverPeer) addBanScore(persistent, transient uint32, reason string) bool {
	warnThreshold := uint32(defaultBanLimit >> 1)
	score := sp.banScore.Increase(persistent, transient)
	if score > warnThreshold {
		peerLog.Warnf("Misbehaving peer %s: %s -- ban score increased to %d",
			sp, reason, score)
		if score > defaultBanLimit {
			peerLog.Warnf("Misbehaving peer %s -- banning and disconnecting", sp)
			return true
		}
	}
	return false
}

func main() {
	sp := &serverPeer{addr: "10.42.0.1:8333"}
	// OnMemPool: a peer asking for the mempool too often gets a decaying score.
	sp.addBanScore(0, 33, "mempool")
	sp.addBanScore(0, 30, "getdata")
	// Any formatting of the score goes through the Stringer, as in the
	// regression test the fix added (increase, then log bs.String()).
	peerLog.Debugf("Ban score of %s: %v", sp, &sp.banScore)
	fmt.Println("ban score now", sp.banScore.Int())
}
