// Package samecondition: a lock taken under one condition by a caller and
// under the same condition by a callee it calls while holding it. Each
// take alone is conditional; together, wherever the caller holds the
// lock the callee takes it again (podman's batched container locks).
package samecondition

import (
	"fmt"
	"sync"
)

type Container struct {
	lock    sync.Mutex
	batched bool
	state   int
}

// State locks unless the container is batched (its caller holds the lock).
func (c *Container) State() int {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	return c.state
}

func (c *Container) Stop() error {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	if c.state != 1 {
		return fmt.Errorf("cannot stop in state %d", c.State()) // want `Container.lock locked again by Container.State \(at samecondition.go:\d+\), taken there as here only where batched is false, while held since samecondition.go:\d+: self-deadlock \[double-lock\]`
	}
	c.state = 2
	return nil
}

// The condition travels up through an unconditional helper.
func (c *Container) describe() string { return fmt.Sprint("state ", c.State()) }

func (c *Container) Pause() {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	fmt.Println(c.describe()) // want `Container.lock locked again by Container.describe -> Container.State \(at samecondition.go:\d+\), taken there as here only where batched is false, while held since samecondition.go:\d+: self-deadlock \[double-lock\]`
}

// Correct: the caller marks the container batched once it holds the
// lock, so the callee does not lock again.
func (c *Container) Kill() int {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		c.batched = true
		defer func() { c.batched = false }()
	}
	return c.State()
}

// Correct: the caller holds the lock exactly where the callee does not
// take it.
type Pool struct {
	mu     sync.Mutex
	locked bool
	n      int
}

func (p *Pool) size() int {
	if !p.locked {
		p.mu.Lock()
		defer p.mu.Unlock()
	}
	return p.n
}

func (p *Pool) Grow() int {
	if p.locked {
		p.mu.Lock()
		defer p.mu.Unlock()
	}
	return p.size()
}

// Correct: the callee's condition is another container's.
func (c *Container) Compare(other *Container) int {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	return c.state - other.peek(c)
}

func (o *Container) peek(by *Container) int {
	if !o.batched {
		by.lock.Lock()
		defer by.lock.Unlock()
	}
	return o.state
}
