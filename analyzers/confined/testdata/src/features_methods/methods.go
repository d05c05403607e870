// Package features_methods: method values and method expressions as
// goroutine bodies and as asynchronous callbacks.
package features_methods

import (
	"time"

	"github.com/confinelint/confinelint/confine"
)

type Ticker struct {
	owner confine.Owner
	ticks int //confined:control
}

//confined:entry
func (t *Ticker) run() {
	t.owner.Bind()
	t.tick()    // silent: a direct call on control
	f := t.tick // a method value called synchronously: silent
	f()
	apply(t, (*Ticker).tick) // a method expression called synchronously: silent
}

func apply(t *Ticker, m func(*Ticker)) { m(t) }

func (t *Ticker) tick() {
	t.ticks++ // want `t.ticks is confined to control but written on the goroutine started by the go statement: Ticker.tick -> t.ticks`
}

func (t *Ticker) tock() {
	t.ticks-- // want `t.ticks is confined to control but written on the goroutine started by time.AfterFunc: Ticker.tock -> t.ticks`
}

func (t *Ticker) start() {
	go t.run()
	go (*Ticker).tick(t) // a method expression started as a goroutine
}

func (t *Ticker) later() {
	time.AfterFunc(time.Second, t.tock) // a method value handed to an asynchronous API
}
