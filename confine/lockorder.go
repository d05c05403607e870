//go:build confine || race

package confine

import (
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// The lock-order validator works like the Linux kernel's lockdep. Every
// Mutex and RWMutex belongs to a class (a name). When a goroutine acquires a
// lock of class B while holding one of class A, the edge A -> B is recorded
// once, with the stack. If B already reaches A through recorded edges, some
// pair of goroutines can deadlock on these classes, even if this run was
// lucky; that is reported on the spot, before blocking.
//
// All bookkeeping lives in lockGraph, under lockGraph.mu. To keep -race
// results honest (see race.go) the functions that touch it are //go:norace,
// use no maps (the runtime reports map accesses itself), and run between
// hideSyncBegin and hideSyncEnd.

// heldBuckets spreads the held locks over a few slices keyed by goroutine
// id, so that a lookup scans only a handful of entries.
const heldBuckets = 64

var lockGraph struct {
	mu      sync.Mutex
	classes []*lockClass            // named classes (NewMutex), interned by name
	held    [heldBuckets][]heldLock // locks held now, by goroutine id % heldBuckets
	search  uint64                  // generation mark for path searches
	// sites counts the unnamed classes first locked at each call site, to
	// number them in messages.
	sites []siteCount
}

type siteCount struct {
	site string
	n    int
}

type lockClass struct {
	name string
	// after holds the edges from this class: locks acquired while one of
	// this class was held.
	after   []*orderEdge
	visited uint64 // == lockGraph.search while a search has been here
}

type orderEdge struct {
	to *lockClass
	LockEdge
}

type heldLock struct {
	goroutine uint64
	lock      *lockState
}

// lockState is the lock-order bookkeeping of one Mutex or RWMutex.
type lockState struct {
	class *lockClass // set by NewMutex, or on the first Lock: a class of its own
}

func (s *lockState) setClass(name string) {
	hideSyncBegin()
	s.setClassNoRace(name)
	hideSyncEnd()
}

// willLock runs before blocking on the lock: it reports a recursive lock or
// an order inversion against the locks this goroutine holds, and records
// new edges.
func (s *lockState) willLock(op string) {
	me := currentGoroutineID()
	hideSyncBegin()
	v, found := s.checkOrder(op, me)
	hideSyncEnd()
	if found {
		v.PC = callerPC(2)
		report(v)
	}
}

// locked records that the calling goroutine now holds the lock.
func (s *lockState) locked() {
	me := currentGoroutineID()
	hideSyncBegin()
	s.pushHeld(me)
	hideSyncEnd()
}

// unlocking records that the lock is about to be released.
func (s *lockState) unlocking() {
	me := currentGoroutineID()
	hideSyncBegin()
	s.popHeld(me)
	hideSyncEnd()
}

//go:norace
func (s *lockState) setClassNoRace(name string) {
	lockGraph.mu.Lock()
	defer lockGraph.mu.Unlock()
	if name != "" {
		s.class = internClass(name)
	}
}

//go:norace
func (s *lockState) checkOrder(op string, me uint64) (Violation, bool) {
	lockGraph.mu.Lock()
	defer lockGraph.mu.Unlock()
	class := s.classOrCallSite()
	for _, h := range lockGraph.held[me%heldBuckets] {
		if h.goroutine != me {
			continue
		}
		if h.lock == s {
			return Violation{Kind: RecursiveLock, Op: op, Goroutine: me, Class: class.name}, true
		}
		held := h.lock.class
		// Nesting within one class (say, two instances of the same
		// struct) has no order to check.
		if held == class || held.edgeTo(class) != nil {
			continue
		}
		edge := held.addEdge(class, me)
		if back := class.pathTo(held); back != nil {
			v := Violation{Kind: LockOrderInversion, Op: op, Goroutine: me, Class: class.name}
			v.Cycle = append(v.Cycle, edge.LockEdge)
			for _, e := range back {
				v.Cycle = append(v.Cycle, e.LockEdge)
			}
			return v, true
		}
	}
	return Violation{}, false
}

//go:norace
func (s *lockState) pushHeld(me uint64) {
	lockGraph.mu.Lock()
	defer lockGraph.mu.Unlock()
	s.classOrCallSite() // TryLock may be the first use
	bucket := &lockGraph.held[me%heldBuckets]
	*bucket = append(*bucket, heldLock{goroutine: me, lock: s})
}

//go:norace
func (s *lockState) popHeld(me uint64) {
	lockGraph.mu.Lock()
	defer lockGraph.mu.Unlock()
	if removeHeld(&lockGraph.held[me%heldBuckets], me, s) {
		return
	}
	// A sync.Mutex may be unlocked by a goroutine other than the one that
	// locked it; release whoever holds it.
	for i := range lockGraph.held {
		if removeHeld(&lockGraph.held[i], 0, s) {
			return
		}
	}
}

// removeHeld removes the most recent entry for lock s held by goroutine
// (any goroutine if 0). It shifts by hand: copy would report the shared
// slice to the race detector.
//
//go:norace
func removeHeld(bucket *[]heldLock, goroutine uint64, s *lockState) bool {
	held := *bucket
	for i := len(held) - 1; i >= 0; i-- {
		if held[i].lock != s || (goroutine != 0 && held[i].goroutine != goroutine) {
			continue
		}
		for j := i; j+1 < len(held); j++ {
			held[j] = held[j+1]
		}
		held[len(held)-1] = heldLock{}
		*bucket = held[:len(held)-1]
		return true
	}
	return false
}

// classOrCallSite returns s's class. A lock given no class name is a class
// of its own, named after the caller of its first Lock: two zero-value
// locks are two classes even when first locked on the same line (one
// helper locking every mutex), so an inversion between them is seen. The
// second and later classes first locked at one site are numbered ("#2").
//
//go:norace
func (s *lockState) classOrCallSite() *lockClass {
	if s.class == nil {
		name := callSite()
		if n := countSite(name); n > 1 {
			name += " #" + strconv.Itoa(n)
		}
		s.class = &lockClass{name: name}
	}
	return s.class
}

// countSite counts one more unnamed class first locked at site and returns
// the count.
//
//go:norace
func countSite(site string) int {
	for i := range lockGraph.sites {
		if lockGraph.sites[i].site == site {
			lockGraph.sites[i].n++
			return lockGraph.sites[i].n
		}
	}
	lockGraph.sites = append(lockGraph.sites, siteCount{site: site, n: 1})
	return 1
}

//go:norace
func internClass(name string) *lockClass {
	for _, c := range lockGraph.classes {
		if c.name == name {
			return c
		}
	}
	c := &lockClass{name: name}
	lockGraph.classes = append(lockGraph.classes, c)
	return c
}

//go:norace
func (c *lockClass) edgeTo(to *lockClass) *orderEdge {
	for _, e := range c.after {
		if e.to == to {
			return e
		}
	}
	return nil
}

//go:norace
func (c *lockClass) addEdge(to *lockClass, goroutine uint64) *orderEdge {
	e := &orderEdge{to: to, LockEdge: LockEdge{
		Held: c.name, Acquired: to.name, Goroutine: goroutine, Stack: stackHere(),
	}}
	c.after = append(c.after, e)
	return e
}

// pathTo returns the edges of a path from c to target, or nil.
//
//go:norace
func (c *lockClass) pathTo(target *lockClass) []*orderEdge {
	lockGraph.search++
	return c.searchPath(target, lockGraph.search)
}

//go:norace
func (c *lockClass) searchPath(target *lockClass, mark uint64) []*orderEdge {
	c.visited = mark
	for _, e := range c.after {
		if e.to == target {
			return []*orderEdge{e}
		}
		if e.to.visited != mark {
			if rest := e.to.searchPath(target, mark); rest != nil {
				return append([]*orderEdge{e}, rest...)
			}
		}
	}
	return nil
}

// stackHere returns the return addresses of the calling goroutine. Frames
// of this package are left in and skipped when a Violation is formatted:
// with inlining, one address can stand for a user frame and a confine frame
// at once.
func stackHere() []uintptr {
	pcs := make([]uintptr, 32)
	return pcs[:runtime.Callers(2, pcs)]
}

// callSite names the first caller outside this package:
// "example.com/pkg.(*T).method at file.go:42".
func callSite() string {
	var pcs [16]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, confinePrefix) || !more {
			return f.Function + " at " + filepath.Base(f.File) + ":" + strconv.Itoa(f.Line)
		}
	}
}
