// Modeled on HashiCorp Nomad's client, which serializes work on a single
// allocation with a per-allocation lock kept in a map, next to the client's
// allocLock (an RWMutex guarding the allocs map).
//
// CORRECT: while an allocation lock is held the code calls accessors that
// briefly take the container's own mutex (allocLocks.mu): Unlock(id) goes
// through entry(id), and Uses(id) reads a counter. That only creates the
// edge alloc lock -> allocLocks.mu; allocLocks.mu is never held while
// waiting for an alloc lock (entry returns before Lock is called, and GC
// never touches the entry mutexes). allocMu is always taken after the alloc
// lock (updateAlloc) or alone (snapshot IDs, then release). No cycle.
package main

import (
	"fmt"
	"sync"
)

type allocLock struct {
	mu   sync.Mutex
	uses int // guarded by allocLocks.mu
}

type allocLocks struct {
	mu    sync.Mutex
	locks map[string]*allocLock
}

// entry returns the lock entry for id, creating it on a miss.
func (a *allocLocks) entry(id string) *allocLock {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.locks[id]
	if !ok {
		e = &allocLock{}
		a.locks[id] = e
	}
	e.uses++
	return e
}

func (a *allocLocks) Lock(id string)   { a.entry(id).mu.Lock() }
func (a *allocLocks) Unlock(id string) { a.entry(id).mu.Unlock() }

func (a *allocLocks) Uses(id string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.locks[id]; ok {
		return e.uses
	}
	return 0
}

type Client struct {
	allocMu sync.RWMutex
	allocs  map[string]string // id -> client status
	locks   *allocLocks
}

func (c *Client) updateAlloc(id, status string) {
	c.locks.Lock(id)
	defer c.locks.Unlock(id) // accessor takes locks.mu while the key is held

	if c.locks.Uses(id) > 1000 { // metrics; briefly takes locks.mu
		fmt.Println("hot alloc", id)
	}
	c.allocMu.Lock()
	c.allocs[id] = status
	c.allocMu.Unlock()
}

func (c *Client) markAllLost() {
	c.allocMu.RLock()
	ids := make([]string, 0, len(c.allocs))
	for id := range c.allocs {
		ids = append(ids, id)
	}
	c.allocMu.RUnlock()
	for _, id := range ids {
		c.updateAlloc(id, "lost")
	}
}

func main() {
	c := &Client{allocs: map[string]string{}, locks: &allocLocks{locks: map[string]*allocLock{}}}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		id := fmt.Sprint("alloc-", i%3)
		go func() { defer wg.Done(); c.updateAlloc(id, "running") }()
		go func() { defer wg.Done(); c.markAllLost() }()
	}
	wg.Wait()
	fmt.Println(len(c.allocs))
}
