// Project: libp2p/go-libp2p-swarm (dial_sync.go DialSync.DialLock, getActiveDial, activeDial.wait, incref, decref; swarm_dial.go Swarm.Dial), the swarm shipped with go-ipfs 0.4.4, October 2016 (fixed by go-libp2p-swarm PR #4 "fix lock ordering race condition in dial sync code", picked up by go-ipfs PR #3339).
// Bug: DialSync.getActiveDial holds ds.dialsLk while it bumps the reference count of the dial it found (activeDial.incref takes ad.refCntLk), but activeDial.decref, run when a caller stops waiting for the dial, holds ad.refCntLk (deferred unlock) and, when the count drops to zero, takes ds.dialsLk to delete the dial from the map. One caller finishing a dial while another caller dials the same peer deadlocks the two goroutines, and every later dial then blocks on ds.dialsLk. The fix drops refCntLk before taking dialsLk and re-checks the count holding both locks in dialsLk, refCntLk order.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type ID string // peer.ID

type Conn struct{ remote ID }

type DialFunc func(context.Context, ID) (*Conn, error)

// schedulePoint marks a spot where the goroutine can be preempted; the probe
// widens it so the interleaving from the bug report is reproducible.
var schedulePoint = func() { time.Sleep(60 * time.Millisecond) }

// DialSync is a dial synchronization helper that ensures that at most one dial
// to any given peer is active at any given time.
type DialSync struct {
	dials    map[ID]*activeDial
	dialsLk  sync.Mutex
	dialFunc DialFunc
}

func NewDialSync(dfn DialFunc) *DialSync {
	return &DialSync{dials: make(map[ID]*activeDial), dialFunc: dfn}
}

type activeDial struct {
	id       ID
	refCnt   int
	refCntLk sync.Mutex
	cancel   func()

	err    error
	conn   *Conn
	waitch chan struct{}

	ds *DialSync
}

func (ad *activeDial) wait(ctx context.Context) (*Conn, error) {
	defer ad.decref()
	select {
	case <-ad.waitch:
		return ad.conn, ad.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (ad *activeDial) incref() {
	ad.refCntLk.Lock()
	defer ad.refCntLk.Unlock()
	ad.refCnt++
}

func (ad *activeDial) decref() {
	ad.refCntLk.Lock()
	ad.refCnt--
	schedulePoint()
	maybeZero := (ad.refCnt <= 0)
	ad.refCntLk.Unlock()

	// make sure to always take locks in correct order.
	if maybeZero {
		ad.ds.dialsLk.Lock()
		ad.refCntLk.Lock()
		// check again after lock swap drop to make sure nobody else called incref
		// in between locks
		if ad.refCnt <= 0 {
			ad.cancel()
			delete(ad.ds.dials, ad.id)
		}
		ad.refCntLk.Unlock()
		ad.ds.dialsLk.Unlock()
	}
}

func (ad *activeDial) start(ctx context.Context) {
	ad.conn, ad.err = ad.ds.dialFunc(ctx, ad.id)
	close(ad.waitch)
	ad.cancel()
}

func (ds *DialSync) getActiveDial(p ID) *activeDial {
	ds.dialsLk.Lock()
	defer ds.dialsLk.Unlock()

	actd, ok := ds.dials[p]
	if !ok {
		adctx, cancel := context.WithCancel(context.Background())
		actd = &activeDial{id: p, cancel: cancel, waitch: make(chan struct{}), ds: ds}
		ds.dials[p] = actd
		go actd.start(adctx)
	}
	schedulePoint()
	// increase ref count before dropping dialsLk
	actd.incref()
	return actd
}

func (ds *DialSync) DialLock(ctx context.Context, p ID) (*Conn, error) {
	return ds.getActiveDial(p).wait(ctx)
}

// --- swarm ---

type Swarm struct {
	local   ID
	connsLk sync.RWMutex
	conns   map[ID][]*Conn
	dsync   *DialSync
	// transportDial dials the peer's addresses through the transports.
	transportDial func(context.Context, ID) (*Conn, error)
}

func NewSwarm(local ID, td func(context.Context, ID) (*Conn, error)) *Swarm {
	s := &Swarm{local: local, conns: make(map[ID][]*Conn), transportDial: td}
	s.dsync = NewDialSync(s.doDial)
	return s
}

func (s *Swarm) bestConnectionToPeer(p ID) *Conn {
	s.connsLk.RLock()
	defer s.connsLk.RUnlock()
	if cs := s.conns[p]; len(cs) > 0 {
		return cs[0]
	}
	return nil
}

// Dial connects to a peer, reusing an open connection or joining an active dial.
func (s *Swarm) Dial(ctx context.Context, p ID) (*Conn, error) {
	if p == s.local {
		return nil, errors.New("attempted to dial self")
	}
	if c := s.bestConnectionToPeer(p); c != nil {
		return c, nil
	}
	return s.dsync.DialLock(ctx, p)
}

func (s *Swarm) doDial(ctx context.Context, p ID) (*Conn, error) {
	c, err := s.transportDial(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("dial attempt failed: %w", err)
	}
	s.connsLk.Lock()
	s.conns[p] = append(s.conns[p], c)
	s.connsLk.Unlock()
	return c, nil
}

func main() {
	// The remote peer is unreachable: every transport dial fails after 20ms.
	s := NewSwarm("QmLocal", func(ctx context.Context, p ID) (*Conn, error) {
		time.Sleep(20 * time.Millisecond)
		return nil, errors.New("dial tcp 10.0.0.7:4001: connection refused")
	})
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // bitswap wants a block from the peer
		defer wg.Done()
		_, err := s.Dial(ctx, "QmPeer")
		fmt.Println("first dial:", err)
	}()
	go func() { // the DHT dials the same peer while the first dial winds down
		defer wg.Done()
		time.Sleep(80 * time.Millisecond)
		_, err := s.Dial(ctx, "QmPeer")
		fmt.Println("second dial:", err)
	}()
	wg.Wait()
}
