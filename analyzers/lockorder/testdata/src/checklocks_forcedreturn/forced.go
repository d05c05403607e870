// Package checklocks_forcedreturn: a finding at an implicit return sits on
// the function's name; a +checklocksforce there drops it, and must not
// touch any other finding (alone in its package, it once crashed the
// analysis).
package checklocks_forcedreturn

import "sync"

type cache struct {
	mu   sync.Mutex
	hits int // +checklocks:mu
}

func (c *cache) lockForced() { // +checklocksforce: callers unlock
	c.mu.Lock()
}
