// Package wrapperfields: fields of a mutex wrapper type (a Locker whose
// Lock and Unlock lock a mutex inside it, counting or logging on the way)
// are each their own lock, as two sync.Mutex fields would be. Followed
// through the wrapper's summary, every field of the type was one lock
// class, the wrapper's inner mutex, and the inversion below went unseen.
package wrapperfields

import "sync"

type countingMutex struct {
	mu    sync.Mutex
	count int
}

func (m *countingMutex) Lock()   { m.mu.Lock(); m.count++ }
func (m *countingMutex) Unlock() { m.mu.Unlock() }

type pair struct {
	a, b countingMutex
	x, y int
}

func (p *pair) both() {
	p.a.Lock()
	p.b.Lock()
	p.x, p.y = p.y, p.x
	p.b.Unlock()
	p.a.Unlock()
}

func (p *pair) swapped() {
	p.b.Lock()
	p.a.Lock() // want `lock order inversion: pair.a then pair.b in pair.both .* but pair.b then pair.a in pair.swapped .*\[lock-order\]`
	p.x = p.y
	p.a.Unlock()
	p.b.Unlock()
}

func Run(p *pair) {
	go p.both()
	p.swapped()
}

// The same order everywhere: silent.
type ordered struct {
	a, b countingMutex
	n    int
}

func (o *ordered) one() {
	o.a.Lock()
	o.b.Lock()
	o.n++
	o.b.Unlock()
	o.a.Unlock()
}

func (o *ordered) two() {
	o.a.Lock()
	defer o.a.Unlock()
	o.b.Lock()
	defer o.b.Unlock()
	o.n--
}

func RunOrdered(o *ordered) {
	go o.one()
	o.two()
}

// Locked through a wrapper's own method on the receiver (not a field):
// the summary applies, so a second lock of the inner mutex is a double
// lock.
type loggedMutex struct {
	mu sync.Mutex
}

func (m *loggedMutex) Lock()   { m.mu.Lock() }
func (m *loggedMutex) Unlock() { m.mu.Unlock() }

func (m *loggedMutex) bumpTwice() {
	m.Lock()
	m.mu.Lock() // want `loggedMutex.mu locked again .*\[double-lock\]`
	m.mu.Unlock()
	m.Unlock()
}

// A type that also locks through other methods (etcd's batchTx: lock(),
// LockInsideApply()) is not a pure wrapper: its Unlock keeps its summary,
// so it releases what lock() took. Silent.
type batch struct {
	sync.Mutex
	pending int
}

func (b *batch) lock() { b.Mutex.Lock() }

func (b *batch) Unlock() {
	b.pending = 0
	b.Mutex.Unlock()
}

type backend struct {
	tx batch
}

func (k *backend) commit() {
	k.tx.lock()
	k.tx.pending++
	k.tx.Unlock()
}

func (k *backend) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		k.tx.lock()
		k.tx.pending++
		k.tx.Unlock()
	}
}
