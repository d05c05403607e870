// Pattern A. Modelled on an etcd/raft-style node: route() dispatches on the
// message kind; the snapshot case calls installSnapshot, which takes r.mu.
// The locked caller (tick) only ever passes heartbeat/append kinds, and Step
// sends snapshots to route without holding the lock.
package main

import (
	"fmt"
	"sync"
)

type msgKind int

const (
	kindHeartbeat msgKind = iota
	kindAppend
	kindSnapshot
)

type msg struct {
	kind  msgKind
	term  int
	index int
}

type node struct {
	mu        sync.Mutex
	term      int
	commit    int
	snapIndex int
	beats     int
}

// installSnapshot locks r.mu on every path.
func (r *node) installSnapshot(m msg) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.index > r.snapIndex {
		r.snapIndex = m.index
		if r.commit < m.index {
			r.commit = m.index
		}
	}
}

// route requires r.mu to be held unless m.kind == kindSnapshot.
func (r *node) route(m msg) {
	switch m.kind {
	case kindHeartbeat:
		r.beats++
		if m.term > r.term {
			r.term = m.term
		}
	case kindAppend:
		if m.index > r.commit {
			r.commit = m.index
		}
	case kindSnapshot:
		r.installSnapshot(m)
	}
}

// Step is the external entry point.
func (r *node) Step(m msg) {
	if m.kind == kindSnapshot {
		r.route(m) // no lock held: installSnapshot takes it
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.route(m)
}

// tick holds the lock and only passes the two non-snapshot kinds.
func (r *node) tick(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.route(msg{kind: kindHeartbeat, term: r.term})
	if n%5 == 0 {
		r.route(msg{kind: kindAppend, index: r.commit + 1})
	}
}

func main() {
	r := &node{}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := 1; i <= 400; i++ {
			r.tick(i)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 1; i <= 400; i++ {
			k := kindAppend
			if i%50 == 0 {
				k = kindSnapshot
			}
			r.Step(msg{kind: k, term: i / 100, index: i})
		}
	}()
	go func() {
		defer wg.Done()
		for i := 1; i <= 100; i++ {
			r.Step(msg{kind: kindHeartbeat, term: i / 10})
		}
	}()
	wg.Wait()
	r.mu.Lock()
	fmt.Println("term", r.term, "commit>0", r.commit > 0, "snap", r.snapIndex, "beats", r.beats)
	r.mu.Unlock()
}
