package branchdefer

import (
	"errors"
	"sync"
)

// A container method that locks unless its caller batches (`if
// !c.batched { c.lock.Lock(); defer c.lock.Unlock(); ... }`, through the
// lock manager's Locker) holds the container lock to its return on the
// paths that took it: what it takes after the branch is ordered after
// the container lock there (podman's Inspect reading a network-namespace
// container through the runtime lock, against RemoveContainer holding
// the runtime lock and locking the container).

type ctrLocker interface {
	Lock()
	Unlock()
}

type shmLock struct{ mu sync.Mutex }

func (l *shmLock) Lock()   { l.mu.Lock() }
func (l *shmLock) Unlock() { l.mu.Unlock() }

var errRemoved = errors.New("container has been removed")

type podRuntime struct {
	lock  sync.RWMutex
	ctrs  map[string]*podContainer
	valid bool
}

type podContainer struct {
	lock    ctrLocker
	batched bool
	valid   bool
	netns   string
	rt      *podRuntime
}

func (r *podRuntime) lookup(id string) *podContainer {
	r.lock.RLock()
	defer r.lock.RUnlock()
	return r.ctrs[id]
}

func (c *podContainer) sync() error {
	if !c.valid {
		return errRemoved
	}
	return nil
}

func (c *podContainer) inspect() (string, error) {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
		if err := c.sync(); err != nil {
			return "", err
		}
	}
	return c.rt.lookup(c.netns).netns, nil
}

func (r *podRuntime) remove(c *podContainer) {
	r.lock.Lock()
	defer r.lock.Unlock()
	c.lock.Lock() // want `lock order inversion: podContainer.lock then podRuntime.lock in podContainer.inspect \(batched.go:\d+ -> batched.go:\d+ via podRuntime.lookup, where batched is false\) but podRuntime.lock then podContainer.lock in podRuntime.remove \(batched.go:\d+ -> batched.go:\d+\) \[lock-order\]`
	defer c.lock.Unlock()
	c.valid = false
}

// The lock let go before the lookup. Silent.
func (c *podContainer) inspectShort() (string, error) {
	if !c.batched {
		c.lock.Lock()
		err := c.sync()
		c.lock.Unlock()
		if err != nil {
			return "", err
		}
	}
	return c.rt.lookup(c.netns).netns, nil
}

func newPodContainer(r *podRuntime) *podContainer {
	return &podContainer{lock: &shmLock{}, rt: r, valid: true}
}
