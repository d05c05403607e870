package tryacquire

import (
	"context"
	"errors"
	"sync"
)

// A function that locks and lets a deferred literal unlock only when it
// fails (`defer func() { if retErr != nil { c.lock.Unlock() } }()`)
// keeps the lock on success: callers hold it after a successful call.

type container struct {
	lock  sync.Mutex
	valid bool
	state int
}

func (c *container) prepareToStart(ctx context.Context) (retErr error) {
	c.lock.Lock()
	defer func() {
		if retErr != nil {
			c.lock.Unlock()
		}
	}()
	if !c.valid {
		return errors.New("removed")
	}
	if c.state != 0 {
		return errors.New("running")
	}
	return ctx.Err() // nil or not: the lock is held where it is nil
}

func (c *container) status() int {
	c.lock.Lock()
	defer c.lock.Unlock()
	return c.state
}

// Asks for the status with the lock prepareToStart kept.
func (c *container) start(ctx context.Context) error {
	if err := c.prepareToStart(ctx); err != nil {
		return err
	}
	c.state = 1
	_ = c.status() // want `container.lock locked again by container.status \(at deferredguard.go:\d+\) while held since deferredguard.go:\d+: self-deadlock \[double-lock\]`
	c.lock.Unlock()
	return nil
}

// Unlocks what it kept before asking: silent.
func (c *container) startFixed(ctx context.Context) error {
	if err := c.prepareToStart(ctx); err != nil {
		return err
	}
	c.state = 1
	c.lock.Unlock()
	_ = c.status()
	return nil
}

// A deferred literal that always unlocks is a plain deferred unlock.
func (c *container) snapshot() (n int, err error) {
	c.lock.Lock()
	defer func() {
		c.lock.Unlock()
	}()
	if !c.valid {
		return 0, errors.New("removed")
	}
	return c.state, nil
}

func (c *container) report() int {
	n, _ := c.snapshot()
	return n + c.status()
}
