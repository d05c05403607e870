package main

import (
	"fmt"
	"sync"
	"time"
)

// Ticker runs a function periodically until stopped.
type Ticker struct {
	interval time.Duration
	stopCh   chan struct{}
	doneCh   chan struct{}
}

func NewTicker(d time.Duration) *Ticker {
	return &Ticker{interval: d, stopCh: make(chan struct{}), doneCh: make(chan struct{})}
}

func (t *Ticker) Start(f func()) { go t.run(f) }

func (t *Ticker) run(f func()) {
	defer close(t.doneCh)
	tk := time.NewTicker(t.interval)
	defer tk.Stop()
	for {
		select {
		case <-tk.C:
			f()
		case <-t.stopCh:
			return
		}
	}
}

// Stop blocks until run has observed the stop message and exited.
func (t *Ticker) Stop() {
	t.stopCh <- struct{}{}
	<-t.doneCh
}

// Cache is a TTL cache with a background janitor.
type Cache struct {
	mu      sync.Mutex
	entries map[string]time.Time
	ttl     time.Duration
	evicted int
	closed  bool
	janitor *Ticker
}

func NewCache(ttl time.Duration) *Cache {
	c := &Cache{entries: make(map[string]time.Time), ttl: ttl}
	c.janitor = NewTicker(2 * time.Millisecond)
	c.janitor.Start(c.evictExpired)
	return c
}

func (c *Cache) evictExpired() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for k, exp := range c.entries {
		if now.After(exp) {
			delete(c.entries, k)
			c.evicted++
		}
	}
}

func (c *Cache) Put(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.entries[key] = time.Now().Add(c.ttl)
}

func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Close detaches the janitor under the lock, then stops it after
// unlocking, so evictExpired can always finish its current pass.
func (c *Cache) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	j := c.janitor
	c.janitor = nil
	c.mu.Unlock()

	j.Stop()
}

func main() {
	c := NewCache(3 * time.Millisecond)
	for i := 0; i < 20; i++ {
		c.Put(fmt.Sprintf("k%d", i))
		time.Sleep(500 * time.Microsecond)
	}
	time.Sleep(15 * time.Millisecond)
	c.Close()
	c.Close()
	c.mu.Lock()
	ev := c.evicted
	c.mu.Unlock()
	fmt.Println("remaining:", c.Len(), "evicted:", ev)
}
