// Package derived: a reference read out of owned state still points at
// owned data (the contract's rule 6). Accesses through it on another
// goroutine, handing it to a goroutine start, and touching it after
// sending it away are findings; copies are free.
package derived

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/confinelint/confinelint/confine"
)

// Pool runs submitted functions on its workers.
type Pool struct{ jobs chan func() }

// Submit hands f to a worker.
//
//confined:spawns f
func (p *Pool) Submit(f func()) { p.jobs <- f }

type partState struct {
	inflight int
	offsets  []int64
}

// counter synchronises itself: accesses through it need no owner.
type counter struct {
	mu sync.Mutex
	n  int
}

type window struct{ lo, hi int }

type Control struct {
	owner    confine.Owner
	parts    map[string]*partState //confined:control
	paused   map[string]bool       //confined:control
	names    []string              //confined:control
	limit    int                   //confined:control
	win      window                //confined:control
	counters map[string]*counter   //confined:control
	pool     *Pool
	in       chan string
	out      chan *partState
}

//confined:entry
func (c *Control) run() {
	c.owner.Bind()
	for key := range c.in {
		c.dispatch(key)
		c.dispatchSafely(key)
		c.pause()
		c.pauseSafely()
		c.handOver(key)
		c.handOverSafely(key)
		c.timers(key)
		c.helpers(key)
		c.counted(key)
		c.viaAccessor(key)
		c.handOffShapes(key)
		c.handOffCopies(key)
		c.probe(key)
	}
}

// dispatch: the pointer loaded from the owned map is written on a worker.
func (c *Control) dispatch(key string) {
	ps := c.parts[key]
	c.pool.Submit(func() {
		ps.inflight-- // want `ps.inflight is confined to control but written on the goroutine started by Pool.Submit: Control.dispatch.func1 -> c.parts -> ps.inflight`
	})
	names := c.names
	go func() {
		_ = names[0] // want `names\[0\] is confined to control but read on the goroutine started by the go statement: Control.dispatch.func2 -> c.names -> names\[0\]`
	}()
}

// dispatchSafely copies before crossing: silent.
func (c *Control) dispatchSafely(key string) {
	n := c.parts[key].inflight
	limit := c.limit
	w := c.win
	names := slices.Clone(c.names)
	c.pool.Submit(func() {
		_ = n + limit + w.lo + w.hi
		names[0] = "x"
	})
}

// pause hands the owned map itself to a new goroutine.
func (c *Control) pause() {
	go c.logPaused(c.paused) // want `c.paused is confined to control but handed to the goroutine started by the go statement, where Control.logPaused reads it: Control.logPaused -> len\(m\)`
	go c.ignore(c.paused)
}

// pauseSafely hands a copy: silent.
func (c *Control) pauseSafely() {
	go c.logPaused(maps.Clone(c.paused))
	go c.logNames(slices.Clone(c.names))
}

func (c *Control) logPaused(m map[string]bool) { println(len(m)) }

func (c *Control) logNames(names []string) { println(names[0]) }

// ignore never touches its argument: handing the map to it shares nothing.
func (c *Control) ignore(map[string]bool) {}

// handOver sends the pointer to its new owner, then touches it.
func (c *Control) handOver(key string) {
	ps := c.parts[key]
	c.out <- ps
	ps.inflight = 0 // want `ps is sent on c.out at derived.go:\d+, which hands it to the receiver, but written afterwards: c.parts -> c.out <- ps -> ps.inflight`
}

// handOverSafely forgets it after the send: silent.
func (c *Control) handOverSafely(key string) {
	ps := c.parts[key]
	ps.inflight = 0
	delete(c.parts, key)
	c.out <- ps
}

// timers hands a method value bound to an owned pointer to a timer.
func (c *Control) timers(key string) {
	ps := c.parts[key]
	time.AfterFunc(time.Second, ps.reset) // want `ps is confined to control but handed to the goroutine started by time.AfterFunc, where partState.reset writes it: c.parts -> partState.reset -> p.offsets`
}

func (p *partState) reset() { p.offsets = nil }

// helpers: a worker passes the pointer to functions that touch it.
func (c *Control) helpers(key string) {
	ps := c.parts[key]
	c.pool.Submit(func() {
		drop(ps)         // want `ps is confined to control but written on the goroutine started by Pool.Submit: Control.helpers.func1 -> c.parts -> drop -> p.offsets`
		_ = describe(ps) // want `ps is confined to control but read on the goroutine started by Pool.Submit: Control.helpers.func1 -> c.parts -> describe -> p.inflight`
		keep(ps)
	})
}

func drop(p *partState) { p.offsets = nil }

func describe(p *partState) int { return p.inflight }

func keep(*partState) {}

// counted: counter guards itself, so a worker may use it.
func (c *Control) counted(key string) {
	ct := c.counters[key]
	c.pool.Submit(func() {
		ct.mu.Lock()
		ct.n++
		ct.mu.Unlock()
	})
}

// viaAccessor: the pointer comes from an accessor that reads owned state.
func (c *Control) viaAccessor(key string) {
	ps := c.part(key)
	c.pool.Submit(func() {
		ps.inflight++ // want `ps.inflight is confined to control but written on the goroutine started by Pool.Submit: Control.viaAccessor.func1 -> c.parts -> ps.inflight`
	})
}

func (c *Control) part(key string) *partState { return c.parts[key] }

// received: a value received from a channel belongs to the receiver, who
// may hand it on: silent.
func (c *Control) received(in chan *partState) {
	ps := <-in
	go func() { ps.inflight++ }()
}

var _ = (*Control).received

// handOffShapes: a slice, a pointer and a bound method value handed to
// goroutine starts.
func (c *Control) handOffShapes(key string) {
	go c.logNames(c.names) // want `c.names is confined to control but handed to the goroutine started by the go statement, where Control.logNames reads it: Control.logNames -> names\[0\]`
	go drop(c.parts[key])  // want `c.parts.key. is confined to control but handed to the goroutine started by the go statement, where drop writes it: c.parts -> drop -> p.offsets`
	ps := c.parts[key]
	c.pool.Submit(ps.reset) // want `ps is confined to control but handed to the goroutine started by Pool.Submit, where partState.reset writes it: c.parts -> partState.reset -> p.offsets`
}

// handOffCopies: values, not references, cross: silent.
func (c *Control) handOffCopies(key string) {
	go c.logWindow(c.win)
	go c.logLimit(c.limit)
	go c.logNames(append([]string(nil), c.names...))
	go c.logCount(c.parts[key].inflight)
}

func (c *Control) logWindow(w window) { println(w.lo, w.hi) }

func (c *Control) logLimit(n int) { println(n) }

func (c *Control) logCount(n int) { println(n) }

// probe copies the struct out, but the copy shares the slice: writing
// through it on another goroutine writes control's array. Touching the
// copy's value fields is private.
func (c *Control) probe(key string) {
	st := *c.parts[key]
	go useState(st) // want `st is confined to control but handed to the goroutine started by the go statement, where useState writes it: c.parts -> useState -> p.offsets\[0\]`
	go countState(*c.parts[key])
}

func useState(p partState) { p.offsets[0] = 1 }

func countState(p partState) {
	p.inflight++
	println(p.inflight, len(p.offsets))
}
