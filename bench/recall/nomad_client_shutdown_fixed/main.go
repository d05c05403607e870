// Project: nomad (client/client.go) -- fixed twin
// Fix applied: hashicorp/nomad#2152, Shutdown destroys the runners from a c.getAllocRunners()
// snapshot and does not hold c.allocLock while waiting on ar.WaitCh().

package main

import (
	"fmt"
	"maps"
	"sync"
)

type Allocation struct {
	ID           string
	ClientStatus string
}

func (a *Allocation) Terminated() bool {
	return a.ClientStatus == "complete" || a.ClientStatus == "failed"
}

type AllocStateUpdater func(alloc *Allocation)

type AllocRunner struct {
	alloc       *Allocation
	updater     AllocStateUpdater
	destroy     bool
	destroyCh   chan struct{}
	destroyLock sync.Mutex
	waitCh      chan struct{}
}

func (r *AllocRunner) Run() {
	defer close(r.waitCh)
	<-r.destroyCh // tasks run until destroyed
	r.alloc.ClientStatus = "complete"
	r.syncStatus() // final state sync
}

func (r *AllocRunner) syncStatus() { a := *r.alloc; r.updater(&a) }

func (r *AllocRunner) Destroy() {
	r.destroyLock.Lock()
	defer r.destroyLock.Unlock()
	if !r.destroy {
		r.destroy = true
		close(r.destroyCh)
	}
}

func (r *AllocRunner) WaitCh() <-chan struct{} { return r.waitCh }

type Client struct {
	devMode            bool
	allocs             map[string]*AllocRunner
	allocLock          sync.RWMutex
	blockedAllocations map[string]*Allocation
	blockedAllocsLock  sync.Mutex
	allocUpdates       chan *Allocation
	shutdownCh         chan struct{}
	shutdownLock       sync.Mutex
}

func (c *Client) getAllocRunners() map[string]*AllocRunner {
	c.allocLock.RLock()
	defer c.allocLock.RUnlock()
	return maps.Clone(c.allocs)
}

func (c *Client) addAlloc(alloc *Allocation) {
	ar := &AllocRunner{alloc: alloc, updater: c.updateAllocStatus, destroyCh: make(chan struct{}), waitCh: make(chan struct{})}
	c.allocLock.Lock()
	c.allocs[alloc.ID] = ar
	c.allocLock.Unlock()
	go ar.Run()
}

func (c *Client) updateAllocStatus(alloc *Allocation) {
	// If this alloc was blocking another alloc and transitioned to a terminal state, start the blocked one.
	c.blockedAllocsLock.Lock()
	if blocked, ok := c.blockedAllocations[alloc.ID]; ok && alloc.Terminated() {
		if _, ok := c.getAllocRunners()[alloc.ID]; ok {
			delete(c.blockedAllocations, alloc.ID)
			c.addAlloc(blocked)
		}
	}
	c.blockedAllocsLock.Unlock()
	select {
	case c.allocUpdates <- alloc:
	case <-c.shutdownCh:
	}
}

func (c *Client) Shutdown() error {
	c.shutdownLock.Lock()
	defer c.shutdownLock.Unlock()
	// Destroy all the running allocations.
	if c.devMode {
		for _, ar := range c.getAllocRunners() {
			ar.Destroy()
			<-ar.WaitCh()
		}
	}
	close(c.shutdownCh)
	return nil
}

func main() {
	c := &Client{devMode: true, allocs: map[string]*AllocRunner{}, blockedAllocations: map[string]*Allocation{},
		allocUpdates: make(chan *Allocation, 64), shutdownCh: make(chan struct{})}
	c.addAlloc(&Allocation{ID: "web-1", ClientStatus: "running"})
	// web-2 uses a sticky ephemeral disk and waits for web-1 to terminate.
	c.blockedAllocations["web-1"] = &Allocation{ID: "web-2", ClientStatus: "pending"}
	fmt.Println("shutdown:", c.Shutdown())
}
