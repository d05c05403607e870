// Package maporder: a loop over a map that locks every value and keeps
// the locks takes them in map order, which changes from one range to the
// next; two goroutines running it at once deadlock.
package maporder

import (
	"slices"
	"sync"
)

type informer struct {
	sync.RWMutex
	handlers int
}

type WatchFactory struct {
	informers map[string]*informer
}

// Shutdown locks every informer until it returns.
func (wf *WatchFactory) Shutdown() {
	for _, inf := range wf.informers {
		inf.Lock() // want `lock order by map iteration: WatchFactory.Shutdown takes the informer.RWMutex of each of the values of wf.informers and holds them all, in map order, which changes from one range to the next: two calls at once deadlock \[lock-order\]`
		defer inf.Unlock()
		inf.handlers = 0
	}
}

type node struct {
	mu      sync.Mutex
	blocked bool
}

// blockAll leaves every node locked for unblockAll.
func blockAll(nodes map[string]*node) {
	for _, n := range nodes {
		n.mu.Lock() // want `lock order by map iteration: blockAll takes the node.mu of each of the values of nodes`
		n.blocked = true
	}
}

func unblockAll(nodes map[string]*node) {
	for _, n := range nodes {
		n.blocked = false
		n.mu.Unlock()
	}
}

// The correct counterparts: sorted keys give every caller one order; a
// lock released in the iteration is held alone; read locks wait for no
// reader; a lock held across the loop serializes it; a slice's order is
// everyone's.
func (wf *WatchFactory) ShutdownSorted() {
	keys := make([]string, 0, len(wf.informers))
	for k := range wf.informers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		inf := wf.informers[k]
		inf.Lock()
		defer inf.Unlock()
		inf.handlers = 0
	}
}

func (wf *WatchFactory) ResetEach() {
	for _, inf := range wf.informers {
		inf.Lock()
		inf.handlers = 0
		inf.Unlock()
	}
}

func (wf *WatchFactory) Count() int {
	n := 0
	for _, inf := range wf.informers {
		inf.RLock()
		defer inf.RUnlock()
		n += inf.handlers
	}
	return n
}

var shutdownMu sync.Mutex

func (wf *WatchFactory) ShutdownSerialized() {
	shutdownMu.Lock()
	defer shutdownMu.Unlock()
	for _, inf := range wf.informers {
		inf.Lock()
		defer inf.Unlock()
		inf.handlers = 0
	}
}

func blockList(nodes []*node) {
	for _, n := range nodes {
		n.mu.Lock()
		n.blocked = true
	}
}

// anyLocked locks one informer and returns it locked: one lock, held
// alone, whatever the map's order.
func (wf *WatchFactory) anyLocked() *informer {
	for _, inf := range wf.informers {
		inf.Lock()
		return inf
	}
	return nil
}
