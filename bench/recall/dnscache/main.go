// Like coredns cache plugin / groupcache lookup: read path under RLock, and
// on a miss an explicit upgrade - RUnlock, then Lock, then re-check since
// another goroutine may have filled the entry in between. The resolver runs
// without any lock; waiters block on the entry's done channel unlocked.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type entry struct {
	done chan struct{}
	addr string
}

type Cache struct {
	mu      sync.RWMutex
	entries map[string]*entry
	hits    int
	lookups atomic.Int64
}

func (c *Cache) resolve(name string) string {
	c.lookups.Add(1)
	sum := 0
	for _, r := range name {
		sum += int(r)
	}
	return fmt.Sprintf("10.0.%d.%d", sum%256, len(name))
}

func (c *Cache) Lookup(name string) string {
	c.mu.RLock()
	e, ok := c.entries[name]
	c.mu.RUnlock()
	if ok {
		<-e.done // no lock held
		c.mu.Lock()
		c.hits++
		c.mu.Unlock()
		return e.addr
	}

	// Upgrade: read lock already dropped; take write lock and re-check.
	c.mu.Lock()
	if e, ok := c.entries[name]; ok {
		c.hits++
		c.mu.Unlock()
		<-e.done
		return e.addr
	}
	e = &entry{done: make(chan struct{})}
	c.entries[name] = e
	c.mu.Unlock()

	e.addr = c.resolve(name) // published by close(done)
	close(e.done)
	return e.addr
}

func (c *Cache) Flush(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range names {
		delete(c.entries, n)
	}
}

func main() {
	c := &Cache{entries: make(map[string]*entry)}
	names := []string{"example.org.", "coredns.io.", "golang.org.", "k8s.io."}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				n := names[(g+i)%len(names)]
				if c.Lookup(n) == "" {
					panic("empty answer")
				}
				if i%50 == 49 {
					c.Flush(n)
				}
			}
		}(g)
	}
	wg.Wait()
	c.mu.RLock()
	defer c.mu.RUnlock()
	fmt.Println("hits:", c.hits, "upstream lookups:", c.lookups.Load())
}
