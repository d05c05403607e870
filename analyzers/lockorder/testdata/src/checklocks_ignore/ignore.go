// Package checklocks_ignore: +checklocksignore on a field is a property of
// the field (no atomic checks on it), never a suppression, so it is never
// unused; an explicit guard on the same field still applies.
package checklocks_ignore

import (
	"sync"
	"sync/atomic"
)

type counters struct {
	mu sync.Mutex
	// +checkatomic
	ops int64
	// +checklocksignore
	raw int64
	// +checklocksignore
	// +checklocks:mu
	guarded int64
	other   int64 // +checklocksignore: written before publication
}

func (c *counters) use() int64 {
	atomic.AddInt64(&c.raw, 1)
	c.raw++
	c.other = atomic.LoadInt64(&c.other)
	c.guarded++ // want `write to counters.guarded without holding counters.mu \[guardedby\]`
	return atomic.LoadInt64(&c.ops)
}
