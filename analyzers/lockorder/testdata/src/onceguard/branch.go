package onceguard

import "sync"

// A flag the callee reads but does not set is configuration: the lock is
// taken on some calls only, as before. Silent.
type cache struct {
	mu      sync.Mutex
	enabled bool
	on      bool
	n       int
}

func (c *cache) maybeFlush() {
	if !c.enabled {
		return
	}
	c.mu.Lock()
	c.n = 0
	c.mu.Unlock()
}

func (c *cache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maybeFlush()
}

// A toggle writes the flag on both sides: neither side is "already done".
// Silent.
func (c *cache) toggle() {
	if c.on {
		c.on = false
		return
	}
	c.on = true
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *cache) flip() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.toggle()
}
