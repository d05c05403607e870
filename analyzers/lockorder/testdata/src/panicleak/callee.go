package panicleak

import (
	"errors"
	"log"
	"sync"
)

// A panic raised in a function called with the lock held unwinds through
// the holder as a panic of its own does (etcd's Txn: txn panics on a
// failed write while Txn holds the backend's batch lock until
// txnWrite.End, and a caller that recovers goes on with it locked).

type backend struct {
	mu      sync.Mutex
	pending int
}

type writeTxn struct{ b *backend }

func (b *backend) write() *writeTxn {
	b.mu.Lock()
	return &writeTxn{b: b}
}

func (tw *writeTxn) put(key string) error {
	if key == "" {
		return errors.New("empty key")
	}
	tw.b.pending++
	return nil
}

func (tw *writeTxn) end() { tw.b.mu.Unlock() }

func mustApply(tw *writeTxn, keys []string) {
	for _, k := range keys {
		if err := tw.put(k); err != nil {
			panic("unexpected error during txn with writes: " + err.Error())
		}
	}
}

func (b *backend) txn(keys []string) {
	tw := b.write()
	mustApply(tw, keys) // want `backend.mu taken at callee.go:\d+ is still held when mustApply panics \(at callee.go:\d+\), and applier.apply recovers the panic \(at callee.go:\d+\): the program goes on with backend.mu locked, and its next Lock blocks for good \[lock-leak\]`
	tw.end()
}

// The fix: the end is deferred, and runs on the panic. Silent.
func (b *backend) txnDeferred(keys []string) {
	tw := b.write()
	defer tw.end()
	mustApply(tw, keys)
}

// A callee that cannot panic. Silent.
func (b *backend) txnChecked(keys []string) error {
	tw := b.write()
	defer tw.end()
	for _, k := range keys {
		if err := tw.put(k); err != nil {
			return err
		}
	}
	return nil
}

type applier struct{ b *backend }

func (a *applier) apply(keys []string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("apply failed")
		}
	}()
	a.b.begin(len(keys) > 0)
	a.b.txn(keys)
	a.b.txnDeferred(keys)
	return a.b.txnChecked(keys)
}

// A call that ends the program rather than panics (log.Fatal) leaves no
// lock to anyone. Silent.
func (b *backend) begin(ok bool) {
	b.mu.Lock()
	if !ok {
		log.Fatal("failed to begin tx")
	}
	b.mu.Unlock()
}

// A recover that frees what it must and panics again recovers nothing:
// the panic goes on up. Silent.
type store struct{ b *backend }

func (s *store) open(keys []string) (opened bool) {
	defer func() {
		if r := recover(); !opened && r != nil {
			s.b = nil
			panic(r)
		}
	}()
	s.b.begin(true)
	s.b.mu.Lock()
	if len(keys) > 9 {
		panic("too many keys")
	}
	s.b.mu.Unlock()
	return true
}
