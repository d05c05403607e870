// Package ownedtype: a struct type owned as a whole (//confined:control on
// the type) whose methods are called through a reference read out of
// owned state, on the owner's goroutine (silent) and on a worker.
package ownedtype

import "github.com/confinelint/confinelint/confine"

// Pool runs submitted functions on its workers.
type Pool struct{ jobs chan func() }

// Submit hands f to a worker.
//
//confined:spawns f
func (p *Pool) Submit(f func()) { p.jobs <- f }

// ledger is control's as a whole.
//
//confined:control
type ledger struct {
	owner *confine.Owner
	total int
}

func (l *ledger) add(n int) {
	l.total += n // want `l.total is confined to control but written on the goroutine started by Pool.Submit: Control.tally.func1 -> ledger.add -> l.total`
}

// Total may be called from other packages, on control's goroutine.
//
//confined:control
func (l *ledger) Total() int {
	l.owner.Assert()
	return l.total
}

type Control struct {
	owner confine.Owner
	books map[string]*ledger //confined:control
	pool  *Pool
	in    chan string
	sums  chan int
}

//confined:entry
func (c *Control) run() {
	c.owner.Bind()
	for key := range c.in {
		c.tally(key)
		c.tallyHere(key)
	}
}

// tally calls the ledger's methods on a worker.
func (c *Control) tally(key string) {
	lg := c.books[key]
	c.pool.Submit(func() {
		lg.add(1)
		c.sums <- lg.Total() // want `ledger.Total is confined to control but called on the goroutine started by Pool.Submit`
	})
}

// tallyHere calls them on control and hands the worker a copy: silent.
func (c *Control) tallyHere(key string) {
	lg := c.books[key]
	lg.add(1)
	total := lg.Total()
	c.pool.Submit(func() { c.sums <- total })
}
