// Package checklocks_identity: one lock under two names. A handshake
// built by its endpoint holds that endpoint (h.ep is e), a comparison
// that panics unless two endpoints are one makes their locks one, and a
// constructor returning nil with an error holds no lock on that path.
package checklocks_identity

import (
	"errors"
	"sync"
)

type Endpoint struct {
	mu    sync.Mutex
	h     *handshake // +checklocks:mu
	state int        // +checklocks:mu
}

type handshake struct {
	ep   *Endpoint
	step int // +checklocks:ep.mu
}

// assertHeld tells the checker that e.mu is held: it is locked.mu, or the
// function panics.
// +checklocks:locked.mu
// +checklocksacquire:e.mu
func (e *Endpoint) assertHeld(locked *Endpoint) {
	if e != locked {
		panic("not the locked endpoint")
	}
}

// assertUnchecked claims the same without the comparison.
// +checklocks:locked.mu
// +checklocksacquire:e.mu
func (e *Endpoint) assertUnchecked(locked *Endpoint) { // want `Endpoint.mu is declared acquired but is not held on this return path \(at the implicit return, identity.go:38\) \[acquires\]`
	_ = locked
}

// newHandshake returns h with h.ep == e: h.ep.mu is e.mu, held.
// +checklocks:e.mu
// +checklocksacquire:h.ep.mu
func (e *Endpoint) newHandshake() (h *handshake) {
	h = &handshake{ep: e}
	h.ep.assertHeld(e)
	e.h = h
	return h
}

// newPassive goes through newHandshake: still e's.
// +checklocks:e.mu
// +checklocksacquire:h.ep.mu
func (e *Endpoint) newPassive() (h *handshake) {
	h = e.newHandshake()
	h.start()
	return h
}

// +checklocks:h.ep.mu
func (h *handshake) start() { h.step = 1 }

// +checklocks:e.mu
func (e *Endpoint) connect() {
	h := e.newPassive()
	h.start()
}

func handshakeFor(e *Endpoint) *handshake {
	e.mu.Lock()
	h := e.newHandshake()
	h.start()
	h.ep.mu.Unlock() // e.mu: nothing left held
	return h
}

func handshakeOf(o *Endpoint) *handshake { return &handshake{ep: o} }

// startFor holds e.mu, but the handshake is o's.
// +checklocks:e.mu
func (e *Endpoint) startFor(o *Endpoint) {
	h := handshakeOf(o)
	h.start() // want `call to handshake.start requires Endpoint.mu held exclusively, but it is not held here \[requires\]`
}

var errFull = errors.New("full")

// newLocked returns a locked endpoint, or nil and an error.
// +checklocksacquire:n.mu
func newLocked(full bool) (n *Endpoint, err error) {
	if full {
		return nil, errFull
	}
	n = &Endpoint{}
	n.mu.Lock()
	return n, nil
}

func accept(full bool) error {
	n, err := newLocked(full)
	if err != nil {
		return err // nothing held: n is nil
	}
	n.state = 1
	n.mu.Unlock()
	return nil
}

func acceptLeaky(full bool) error { // want `the function returns with different locks held on different paths: Endpoint.mu \(taken at identity.go:\d+\) held on some return paths only \[inconsistent-return\]`
	n, err := newLocked(full)
	if err != nil {
		return err
	}
	n.state = 1
	return nil
}

// touchIfSelf writes o only where o is e, whose lock it holds.
// +checklocks:e.mu
func (e *Endpoint) touchIfSelf(o *Endpoint) {
	if o == e {
		o.state = 1
	}
}

// touchUnlessSelf writes o where it is another endpoint.
// +checklocks:e.mu
func (e *Endpoint) touchUnlessSelf(o *Endpoint) {
	if o != e && o != nil {
		o.state = 1 // want `write to Endpoint.state without holding Endpoint.mu \[guardedby\]`
	}
}
