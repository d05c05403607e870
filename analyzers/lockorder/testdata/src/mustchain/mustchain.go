// Package mustchain: a lock taken on every path of a chain of exact calls
// is taken for sure however deep the chain: the bound on chain length is
// for possible takes only.
package mustchain

import "sync"

type Engine struct {
	mu    sync.Mutex
	store *Store
	n     int
}

type Store struct {
	mu  sync.Mutex
	eng *Engine
	n   int
}

// commit holds Engine.mu and reaches Store.mu ten calls down, each step
// unconditional.
func (e *Engine) commit() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.store.s1()
}

func (s *Store) s1()  { s.s2() }
func (s *Store) s2()  { s.s3() }
func (s *Store) s3()  { s.s4() }
func (s *Store) s4()  { s.s5() }
func (s *Store) s5()  { s.s6() }
func (s *Store) s6()  { s.s7() }
func (s *Store) s7()  { s.s8() }
func (s *Store) s8()  { s.s9() }
func (s *Store) s9()  { s.s10() }
func (s *Store) s10() { s.write() }

func (s *Store) write() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
}

// compact holds Store.mu and takes Engine.mu: with commit, an inversion.
func (s *Store) compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eng.mu.Lock() // want `lock order inversion: Engine.mu then Store.mu in Engine.commit \(mustchain.go:\d+ -> mustchain.go:\d+ via Store.s1 -> Store.s2 -> Store.s3 -> Store.s4 -> Store.s5 -> Store.s6 -> Store.s7 -> Store.s8 -> Store.s9 -> Store.s10 -> Store.write\) but Store.mu then Engine.mu in Store.compact \(mustchain.go:\d+ -> mustchain.go:\d+\) \[lock-order\]`
	s.eng.n++
	s.eng.mu.Unlock()
}

// flush holds Engine.mu and reaches Engine.mu again ten calls down.
func (e *Engine) flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.f1() // want `Engine.mu locked again by Engine.f1 -> .* -> Engine.bump \(at mustchain.go:\d+\) while held since mustchain.go:\d+: self-deadlock \[double-lock\]`
}

func (e *Engine) f1()  { e.f2() }
func (e *Engine) f2()  { e.f3() }
func (e *Engine) f3()  { e.f4() }
func (e *Engine) f4()  { e.f5() }
func (e *Engine) f5()  { e.f6() }
func (e *Engine) f6()  { e.f7() }
func (e *Engine) f7()  { e.f8() }
func (e *Engine) f8()  { e.f9() }
func (e *Engine) f9()  { e.f10() }
func (e *Engine) f10() { e.bump() }

func (e *Engine) bump() {
	e.mu.Lock()
	e.n++
	e.mu.Unlock()
}

// Index reaches Log.mu through the same depth, but one step is
// conditional: a possible take that deep propagates no further. Silent.
type Index struct {
	mu  sync.Mutex
	log *Log
	dbg bool
}

type Log struct {
	mu  sync.Mutex
	idx *Index
	n   int
}

func (x *Index) sync() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.log.l1(x.dbg)
}

func (l *Log) l1(dbg bool) { l.l2(dbg) }
func (l *Log) l2(dbg bool) { l.l3(dbg) }
func (l *Log) l3(dbg bool) {
	if dbg {
		l.l4()
	}
}
func (l *Log) l4()  { l.l5() }
func (l *Log) l5()  { l.l6() }
func (l *Log) l6()  { l.l7() }
func (l *Log) l7()  { l.l8() }
func (l *Log) l8()  { l.l9() }
func (l *Log) l9()  { l.l10() }
func (l *Log) l10() { l.append() }

func (l *Log) append() {
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
}

func (l *Log) rotate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.idx.mu.Lock()
	l.idx.dbg = false
	l.idx.mu.Unlock()
}

var _ = []any{(*Engine).commit, (*Store).compact, (*Engine).flush, (*Index).sync, (*Log).rotate}
