// Style: like a kubernetes client-go style keyed cache with self-expiring
// entries. GetOrCreate locks a *new* entry under c.mu (cache -> entry) to run
// its refreshLocked initialiser before publishing it, while Expire takes
// entry -> cache. No cycle exists: the entry locked under c.mu is unreachable
// by any other goroutine until after its lock is released.
package main

import (
	"fmt"
	"sync"
)

type entry struct {
	mu      sync.Mutex
	key     string
	value   int
	gen     int
	expired bool
	c       *Cache
}

// refreshLocked must be called with e.mu held.
func (e *entry) refreshLocked() {
	e.gen++
	e.value = len(e.key)*10 + e.gen
}

func (e *entry) Refresh() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.expired {
		e.refreshLocked()
	}
}

// Expire marks the entry dead and unlinks it from its cache (entry -> cache).
func (e *entry) Expire() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.expired {
		return
	}
	e.expired = true
	e.c.mu.Lock()
	if e.c.entries[e.key] == e {
		delete(e.c.entries, e.key)
	}
	e.c.mu.Unlock()
}

type Cache struct {
	mu      sync.Mutex
	entries map[string]*entry
}

func (c *Cache) GetOrCreate(key string) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		return e
	}
	e := &entry{key: key, c: c}
	e.mu.Lock() // fresh, unpublished object
	e.refreshLocked()
	e.mu.Unlock()
	c.entries[key] = e // publish only after its lock is released
	return e
}

func main() {
	c := &Cache{entries: make(map[string]*entry)}
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				e := c.GetOrCreate(fmt.Sprintf("pod-%d", (i+w)%10))
				switch i % 3 {
				case 0:
					e.Expire()
				default:
					e.Refresh()
				}
			}
		}(w)
	}
	wg.Wait()
	c.mu.Lock()
	fmt.Println("live entries:", len(c.entries))
	c.mu.Unlock()
}
