// Package getter: a method that only returns a field of its receiver is
// that field, so a lock reached through the getter and through the field
// is one lock (etcd's backend.BatchTx).
package getter

import "sync"

type batchTx struct {
	sync.Mutex
	n int
}

type backend struct{ tx *batchTx }

func (b *backend) BatchTx() *batchTx { return b.tx }

// commit holds the batch lock and takes it again through the getter.
func (b *backend) commit() {
	b.tx.Lock()
	defer b.tx.Unlock()
	b.BatchTx().Lock() // want `batchTx.Mutex locked again while held since getter.go:\d+: self-deadlock \[double-lock\]`
	b.tx.n++
}

// put locks through the getter and unlocks through the field. Silent.
func (b *backend) put() {
	b.BatchTx().Lock()
	b.tx.n++
	b.tx.Unlock()
}

type store struct{ b *backend }

// Write leaves the batch lock held for its caller.
func (s *store) Write() {
	s.b.BatchTx().Lock()
}

func (s *store) End() { s.b.tx.Unlock() }

type lessor struct {
	mu sync.Mutex
	s  *store
	n  int
}

// Grant: lessor.mu, then the batch lock.
func (le *lessor) Grant() {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.s.b.BatchTx().Lock()
	le.s.b.tx.n++
	le.s.b.BatchTx().Unlock()
}

// Revoke: the batch lock (through Write), then lessor.mu.
func (le *lessor) Revoke() {
	le.s.Write()
	le.mu.Lock() // want `lock order inversion: lessor.mu then batchTx.Mutex in lessor.Grant \(getter.go:\d+ -> getter.go:\d+\) but batchTx.Mutex then lessor.mu in lessor.Revoke \(getter.go:\d+ -> getter.go:\d+\) \[lock-order\]`
	le.n++
	le.mu.Unlock()
	le.s.End()
}

// RevokeFixed lets lessor.mu go before it writes. Silent.
func (le *lessor) RevokeFixed() {
	le.mu.Lock()
	le.n++
	le.mu.Unlock()
	le.s.Write()
	le.s.End()
}
