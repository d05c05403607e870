// Package crosspublish: handing a fresh object to another package's
// function publishes it only when that function lets it escape (what the
// function does with it comes from its package's facts).
package crosspublish

import (
	"sync"

	"crosspublish/lib"
)

type Conn struct {
	mu    sync.Mutex
	opts  lib.Options
	job   *lib.Job
	state int //confined:guardedby mu
}

func (c *Conn) Event() {
	c.mu.Lock()
	c.state++
	c.mu.Unlock()
}

func (c *Conn) tick() {}

// NewConn gives c to its own options and to a job it keeps: both stay
// inside c, so c is still being built.
func NewConn() *Conn {
	c := &Conn{}
	c.opts.Init(c)
	c.job = lib.NewJob(c.tick)
	c.state = 1
	return c
}

// NewRegistered hands c to a registry others read: published.
func NewRegistered(reg *lib.Registry) *Conn {
	c := &Conn{}
	reg.Register(c)
	c.state = 1 // want `write to Conn.state without holding Conn.mu \[guardedby\]`
	return c
}

// NewKept hands c to a package-level list: published.
func NewKept() *Conn {
	c := &Conn{}
	lib.Keep(c)
	c.state = 1 // want `write to Conn.state without holding Conn.mu \[guardedby\]`
	return c
}

// NewInitedElsewhere stores c into options it does not own: published
// when those options are.
func NewInitedElsewhere(o *lib.Options) *Conn {
	c := &Conn{}
	o.Init(c)
	c.state = 1 // want `write to Conn.state without holding Conn.mu \[guardedby\]`
	return c
}
