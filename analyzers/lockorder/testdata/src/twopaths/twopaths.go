// Package twopaths: one lock named by two paths is still one lock: a
// receiver captured by a closure (SSA keeps it in a cell), a value stored
// into a fresh object's field and read back, a closure registered on the
// object it captured.
package twopaths

import "sync"

type Client struct {
	mu      sync.Mutex
	n       int
	onEvent func()
}

// Foo locks and unlocks through a deferred closure capturing c: callers
// still see that Foo takes c.mu.
func (c *Client) Foo() {
	c.mu.Lock()
	defer func() { c.mu.Unlock() }()
	c.n++
}

// Bar holds c.mu and calls Foo.
func (c *Client) Bar() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Foo() // want `Client.mu locked again by Client.Foo .* while held since`
}

type API struct{ c *Client }

func (a *API) get() int {
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	return a.c.n
}

// Baz reads c back out of a fresh wrapper: the same c.
func (c *Client) Baz() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return (&API{c: c}).get() // want `Client.mu locked again by API.get .* while held since`
}

// Qux uses a wrapper around another client. Silent.
func (c *Client) Qux(other *Client) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return (&API{c: other}).get()
}

// init registers a handler that captured the client it is registered on.
func (c *Client) init() {
	c.onEvent = func() {
		c.mu.Lock()
		c.n++
		c.mu.Unlock()
	}
}

// fire runs the handler under the client's own lock.
func (c *Client) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onEvent() // want `Client.mu locked again by Client.init.func1 .* while held since`
}

// fireUnlocked runs it after unlocking. Silent.
func (c *Client) fireUnlocked() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	c.onEvent()
}

var _ = []any{(*Client).init, (*Client).fire, (*Client).fireUnlocked}
