package app

import (
	"asyncdecl/pool"

	"github.com/confinelint/confinelint/confine"
)

type Consumer struct {
	owner    confine.Owner
	inflight int //confined:control
	pool     *pool.Pool
}

//confined:entry
func (c *Consumer) run() {
	c.owner.Bind()
	c.pool.Submit(func() {
		c.inflight++ // want `c\.inflight is confined to control but written on the goroutine started by pool\.Pool\.Submit`
	})
	pool.Go("flush", func() {
		c.inflight = 0 // want `c\.inflight is confined to control but written on the goroutine started by pool\.Go`
	})
	c.apply(func() { c.inflight-- }) // not an asynchronous API: runs here, silent
}

func (c *Consumer) apply(f func()) { f() }
