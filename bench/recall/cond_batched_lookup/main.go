// Pattern: podman libpod Runtime.LookupContainer + removeContainer. Each
// lookup returns a fresh *Container struct (state is loaded from the DB, the
// lock comes from the lock manager by lock ID and is shared between structs).
// The remove path locks the container and then sets c.batched = true on its
// own, goroutine-private struct so helpers guarded by `if !c.batched` do not
// lock again; batched is reset before the lock is released.
package main

import (
	"fmt"
	"sync"
)

type Runtime struct {
	dbMu  sync.Mutex
	db    map[string]string      // id -> state string (the "BoltDB/SQLite" state)
	locks map[string]*sync.Mutex // lock manager: id -> shared lock
}

type Container struct {
	id      string
	runtime *Runtime
	lock    *sync.Mutex
	state   string
	batched bool
}

func (r *Runtime) LookupContainer(id string) *Container {
	r.dbMu.Lock()
	defer r.dbMu.Unlock()
	l, ok := r.locks[id]
	if !ok {
		return nil
	}
	return &Container{id: id, runtime: r, lock: l}
}

// syncContainer refreshes this struct from the DB; container lock must be held.
func (c *Container) syncContainer() {
	c.runtime.dbMu.Lock()
	c.state = c.runtime.db[c.id]
	c.runtime.dbMu.Unlock()
}

func (c *Container) save() {
	c.runtime.dbMu.Lock()
	c.runtime.db[c.id] = c.state
	c.runtime.dbMu.Unlock()
}

func (c *Container) State() string {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		c.syncContainer()
	}
	return c.state
}

func (c *Container) Stop() {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		c.syncContainer()
	}
	if c.state == "running" {
		c.state = "stopped"
		c.save()
	}
}

func (c *Container) Cleanup() {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		c.syncContainer()
	}
	if c.state == "stopped" {
		c.state = "exited"
		c.save()
	}
}

func (r *Runtime) RemoveContainer(c *Container) {
	c.lock.Lock()
	c.batched = true
	defer func() {
		c.batched = false
		c.lock.Unlock()
	}()
	c.syncContainer()

	if c.State() == "running" { // batched: no re-lock
		c.Stop()
	}
	c.Cleanup()
	c.state = "removed"
	c.save()
}

func main() {
	r := &Runtime{db: map[string]string{}, locks: map[string]*sync.Mutex{}}
	ids := []string{"web", "db", "cache"}
	for _, id := range ids {
		r.db[id] = "running"
		r.locks[id] = new(sync.Mutex)
	}

	var wg sync.WaitGroup
	for i := 0; i < 9; i++ {
		id := ids[i%len(ids)]
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := r.LookupContainer(id) // private struct per goroutine
			if i%3 == 0 {
				r.RemoveContainer(c)
			} else {
				c.Stop()
				_ = c.State()
			}
		}(i)
	}
	wg.Wait()
	for _, id := range ids {
		fmt.Println(id, r.LookupContainer(id).State())
	}
}
