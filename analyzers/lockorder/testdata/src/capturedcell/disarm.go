package capturedcell

import (
	"errors"
	"sync"
)

// A deferred literal calling a variable that holds an unlocking literal,
// disarmed on the path that unlocks by hand before it waits (etcd's
// lessor Renew: `unlock := func() { le.mu.Unlock() }; defer func() {
// unlock() }()`, then `le.mu.Unlock(); unlock = func() {}`). The defers
// run what the variable holds on each path: the early returns release
// the lock, the waiting path released it already. Silent.

type Lessor struct {
	mu      sync.Mutex
	primary bool
	expired map[int]chan struct{}
}

var errNotPrimary = errors.New("not primary")

func (le *Lessor) Renew(id int) error {
	le.mu.Lock()
	unlock := func() { le.mu.Unlock() }
	defer func() { unlock() }()
	if !le.primary {
		return errNotPrimary
	}
	if done, ok := le.expired[id]; ok {
		le.mu.Unlock()
		unlock = func() {}
		<-done
		return errNotPrimary
	}
	return nil
}

func (le *Lessor) Revoke(id int) {
	le.mu.Lock()
	defer le.mu.Unlock()
	delete(le.expired, id)
}

func (le *Lessor) RenewThenRevoke(id int) {
	_ = le.Renew(id)
	le.Revoke(id)
}

// The same, the lock let go by calling the variable itself before it is
// disarmed (etcd's later Renew: `unlock(); unlock = func() {}`): the call
// runs what the variable holds there. Silent.
func (le *Lessor) RenewCalling(id int) error {
	le.mu.Lock()
	unlock := func() { le.mu.Unlock() }
	defer func() { unlock() }()
	if done, ok := le.expired[id]; ok {
		unlock()
		unlock = func() {}
		<-done
		return errNotPrimary
	}
	return nil
}

func (le *Lessor) RenewCallingThenRevoke(id int) {
	_ = le.RenewCalling(id)
	le.Revoke(id)
}

// Disarmed without the unlock: that path returns with the lock held, and
// the caller's Revoke locks it again.
func (le *Lessor) RenewForgot(id int) error {
	le.mu.Lock()
	unlock := func() { le.mu.Unlock() }
	defer func() { unlock() }()
	if _, ok := le.expired[id]; ok {
		unlock = func() {}
		return errNotPrimary // want `Lessor.mu taken at disarm.go:\d+ is still held on this return path \(other paths release it\)`
	}
	return nil
}

func (le *Lessor) RenewForgotThenRevoke(id int) {
	_ = le.RenewForgot(id)
	le.Revoke(id)
}
