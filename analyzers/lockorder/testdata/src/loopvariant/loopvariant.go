// Package loopvariant: a lock reached from a value the loop recomputes
// (c = c.parent) is another lock on the next iteration.
package loopvariant

import "sync"

type common struct {
	mu     sync.Mutex
	parent *common
	done   bool
	name   string
}

// frameSkip is called with c.mu held and walks up the parents holding
// one mu at a time (testing.common.frameSkip). Silent.
func (c *common) frameSkip(names []string) string {
	shouldUnlock := false
	defer func() {
		if shouldUnlock {
			c.mu.Unlock()
		}
	}()
	for _, n := range names {
		if n == c.name && c.parent != nil {
			parent := c.parent
			if shouldUnlock {
				c.mu.Unlock()
			}
			c = parent
			shouldUnlock = true
			c.mu.Lock()
			continue
		}
		return n
	}
	return ""
}

// destination locks each parent in turn, unlocking on return. Silent.
func (c *common) destination() *common {
	for parent := c.parent; parent != nil; parent = parent.parent {
		parent.mu.Lock()
		defer parent.mu.Unlock()
		if !parent.done {
			return parent
		}
	}
	return nil
}

// The same lock re-taken in a loop is still reported.
func (c *common) relock(xs []int) {
	for _, x := range xs {
		c.mu.Lock() // want `common.mu may still be held from the previous loop iteration`
		if x < 0 {
			continue
		}
		c.mu.Unlock()
	}
}
