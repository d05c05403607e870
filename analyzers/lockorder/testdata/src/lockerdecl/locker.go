// Package lockerdecl has types that implement sync.Locker with methods
// whose effects are declared or inferred: a call of them is a call, not an
// opaque lock operation on the value.
package lockerdecl

import "sync"

// Table is a sync.Locker whose Lock and Unlock declare what they do.
type Table struct {
	mu   sync.Mutex
	rows int
}

//confined:acquires mu
func (t *Table) Lock() { t.mu.Lock() }

//confined:releases mu
func (t *Table) Unlock() { t.mu.Unlock() }

//confined:requires mu
func (t *Table) Grow() { t.rows++ }

func (t *Table) Add() {
	t.Lock()
	t.Grow()
	t.Unlock()
}

func (t *Table) AddDeferred() {
	t.Lock()
	defer t.Unlock()
	t.Grow()
}

func (t *Table) forgot() {
	t.Grow() // want `call to Table.Grow requires Table.mu held exclusively, but it is not held here \[requires\]`
}

func (t *Table) twice() {
	t.Lock()
	defer t.Unlock()
	t.mu.Lock() // want `Table.mu locked again while held since locker.go:40: self-deadlock \[double-lock\]`
	t.mu.Unlock()
}

// Index's Lock and Unlock carry no annotation: their inferred effects
// (a lock helper pair) win over the Locker guess too.
type Index struct {
	mu   sync.RWMutex
	keys []string
}

func (x *Index) Lock()   { x.mu.Lock() }
func (x *Index) Unlock() { x.mu.Unlock() }

//confined:requires_shared mu
func (x *Index) Len() int { return len(x.keys) }

func (x *Index) Size() int {
	x.Lock()
	defer x.Unlock()
	return x.Len()
}

func (x *Index) peek() int {
	x.Lock()
	defer x.Unlock()
	x.mu.RLock() // want `RLock of Index.mu while held since locker.go:66: .*\[double-lock\]|Index.mu locked again`
	defer x.mu.RUnlock()
	return len(x.keys)
}
