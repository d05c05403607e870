// Package features_suppress: //confined:ignore silences exactly the
// finding it covers, whichever analyzer reports it; one that silences
// nothing is reported.
package features_suppress

import (
	"sync"

	"github.com/confinelint/confinelint/confine"
)

type Gauge struct {
	owner confine.Owner
	mu    sync.Mutex
	a, b  int //confined:control
	n     int //confined:guardedby mu
}

//confined:entry
func (g *Gauge) run() {
	g.owner.Bind()
	go g.sample()
}

func (g *Gauge) sample() {
	_ = g.a //confined:ignore a torn read of a gauge is acceptable
	_ = g.b // want `g.b is confined to control but read on the goroutine started by the go statement`
	//confined:ignore the next line only
	_ = g.a
	_ = g.a // want `g.a is confined to control but read on the goroutine started by the go statement`
}

// peek reads n without mu: a lockorder finding, silenced by an ignore
// that confined must then count as used.
func (g *Gauge) peek() int {
	//confined:ignore n is a hint, staleness is fine
	return g.n
}

// A declaration-level ignore covers the whole declaration.
//
//confined:ignore debugging helper, run only with the loop stopped
func (g *Gauge) dump() {
	go func() {
		_ = g.a
		_ = g.b
	}()
}

func (g *Gauge) quiet() {
	//confined:ignore stale: nothing here is confined // want `this //confined:ignore silences no finding; remove it \[unused-ignore\]`
	println("quiet")
}
