// Pattern: an `alreadyLocked bool` parameter decides whether the callee takes
// the lock. Modelled on kubernetes client-go's expiring caches and etcd's
// lessor helpers, where a maintenance routine is shared by a janitor goroutine
// (lock not held) and by the write path (lock already held). The flag is
// carried through a local variable and an intermediate helper.
package main

import (
	"fmt"
	"sync"
	"time"
)

type entry struct {
	val     string
	expires time.Time
}

type TTLCache struct {
	mu        sync.Mutex
	items     map[string]entry
	ttl       time.Duration
	maxItems  int
	evictions int
}

func NewTTLCache(ttl time.Duration, maxItems int) *TTLCache {
	return &TTLCache{items: make(map[string]entry), ttl: ttl, maxItems: maxItems}
}

// deleteExpired drops expired entries. It acquires c.mu unless the caller
// says it already holds it.
func (c *TTLCache) deleteExpired(now time.Time, alreadyLocked bool) int {
	if !alreadyLocked {
		c.mu.Lock()
		defer c.mu.Unlock()
	}
	n := 0
	for k, e := range c.items {
		if now.After(e.expires) {
			delete(c.items, k)
			n++
		}
	}
	c.evictions += n
	return n
}

// trim forwards the caller's lock state unchanged.
func (c *TTLCache) trim(now time.Time, held bool) int {
	return c.deleteExpired(now, held)
}

func (c *TTLCache) Set(key, val string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	held := true // we own c.mu for the rest of this function
	now := time.Now()
	if len(c.items) >= c.maxItems {
		c.trim(now, held)
	}
	if len(c.items) >= c.maxItems {
		// still full: drop an arbitrary entry
		for k := range c.items {
			delete(c.items, k)
			c.evictions++
			break
		}
	}
	c.items[key] = entry{val: val, expires: now.Add(c.ttl)}
}

func (c *TTLCache) Get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok || time.Now().After(e.expires) {
		return "", false
	}
	return e.val, true
}

func (c *TTLCache) Stats() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items), c.evictions
}

// janitor runs without c.mu, so it passes held=false.
func (c *TTLCache) janitor(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	held := false
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			c.trim(now, held)
		}
	}
}

func main() {
	c := NewTTLCache(2*time.Millisecond, 16)
	stop, done := make(chan struct{}), make(chan struct{})
	go c.janitor(stop, done)

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := fmt.Sprintf("k%d-%d", w, i%40)
				c.Set(k, "v")
				c.Get(k)
				if i%50 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	<-done
	n, ev := c.Stats()
	fmt.Printf("items=%d evictions=%d\n", n, ev)
}
