// Package cyclegroups: one finding per problem, where the fix goes.
// Cycles that share an edge are reported once, at the edge that closes
// the most of them; a cycle of three or more locks needs every edge
// certain; a cycle that needs test code is its own rule; an ignore at any
// witness of a cycle silences it.
package cyclegroups

import "sync"

type Hub struct {
	a, h, b, c sync.Mutex
}

// culprit takes h under a: the one acquisition both cycles below need.
func (x *Hub) culprit() {
	x.a.Lock()
	defer x.a.Unlock()
	x.h.Lock() // want `lock order inversion: .* this acquisition closes 2 lock-order cycles`
	x.h.Unlock()
}

func (x *Hub) viaB() {
	x.h.Lock()
	x.b.Lock()
	x.b.Unlock()
	x.h.Unlock()
	x.b.Lock()
	x.a.Lock()
	x.a.Unlock()
	x.b.Unlock()
}

func (x *Hub) viaC() {
	x.h.Lock()
	x.c.Lock()
	x.c.Unlock()
	x.h.Unlock()
	x.c.Lock()
	x.a.Lock()
	x.a.Unlock()
	x.c.Unlock()
}

// A cycle of three locks where one edge is only a possible take (the
// callee locks on some paths): not reported.
type Tri struct {
	p, q, r sync.Mutex
	on      bool
}

func (t *Tri) maybeR() {
	if t.on {
		t.r.Lock()
		t.r.Unlock()
	}
}

func (t *Tri) pq() {
	t.p.Lock()
	t.q.Lock()
	t.q.Unlock()
	t.p.Unlock()
}

func (t *Tri) qr() {
	t.q.Lock()
	t.maybeR()
	t.q.Unlock()
}

func (t *Tri) rp() {
	t.r.Lock()
	t.p.Lock()
	t.p.Unlock()
	t.r.Unlock()
}

// Silenced at the witness that is not reported.
type Pair struct {
	x, y sync.Mutex
}

func (p *Pair) xy() {
	p.x.Lock()
	p.y.Lock() //confined:ignore both run under the pair's single owner goroutine
	p.y.Unlock()
	p.x.Unlock()
}

func (p *Pair) yx() {
	p.y.Lock()
	p.x.Lock()
	p.x.Unlock()
	p.y.Unlock()
}

// Prod takes m then n; only a test takes them the other way.
type Prod struct {
	m, n sync.Mutex
}

func (p *Prod) Work() {
	p.m.Lock()
	p.n.Lock()
	p.n.Unlock()
	p.m.Unlock()
}

// Engine's compaction and snapshot each take their own lock, then a
// part's: parts come after both.
type Engine struct {
	compactMu, snapMu sync.Mutex
	part              Part
}

type Part struct{ mu sync.Mutex }

func (e *Engine) Compact() {
	e.compactMu.Lock()
	e.part.mu.Lock()
	e.part.mu.Unlock()
	e.compactMu.Unlock()
}

func (e *Engine) Snapshot() {
	e.snapMu.Lock()
	e.part.mu.Lock()
	e.part.mu.Unlock()
	e.snapMu.Unlock()
}
