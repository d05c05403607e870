package alias

import "sync"

type Parent struct {
	mu sync.Mutex
}

// A child shares its parent's lock under another name.
//
//confined:alias mu=parent.mu
type Child struct {
	parent *Parent
	mu     *sync.Mutex
	n      int //confined:guardedby mu
}

func (c *Child) viaParent() {
	c.parent.mu.Lock()
	c.n++ // silent: parent.mu is mu
	c.parent.mu.Unlock()
}

func (c *Child) viaOwn() {
	c.mu.Lock()
	c.n++
	c.parent.mu.Unlock() // silent: the same lock
}

func (c *Child) twice() {
	c.mu.Lock()
	c.parent.mu.Lock() // want `Parent.mu locked again while held since alias.go:31: self-deadlock \[double-lock\]`
	c.parent.mu.Unlock()
	c.mu.Unlock()
}
