// Package ifacetxn: a store hands out transactions through interfaces.
// Read locks the store and returns a transaction whose End, one of
// several End methods, unlocks it. Which End runs is not known, so the
// lock is not held after it: no leak, no re-lock on the next iteration.
package ifacetxn

import "sync"

type Txn interface {
	Get(k string) int
	End()
}

type KV interface {
	Read() Txn
	Write() Txn
}

type store struct {
	mu sync.RWMutex
	m  map[string]int
}

type readTxn struct{ s *store }

func (s *store) Read() Txn {
	s.mu.RLock()
	return &readTxn{s: s}
}

func (t *readTxn) Get(k string) int { return t.s.m[k] }
func (t *readTxn) End()             { t.s.mu.RUnlock() }

type writeTxn struct{ s *store }

func (s *store) Write() Txn {
	s.mu.Lock()
	return &writeTxn{s: s}
}

func (t *writeTxn) Get(k string) int { return t.s.m[k] }
func (t *writeTxn) End()             { t.s.mu.Unlock() }

// view reads through the interface.
type view struct{ kv KV }

func (v *view) Get(k string) int {
	t := v.kv.Read()
	defer t.End()
	return t.Get(k)
}

func SumAll(v *view, keys []string) int {
	n := 0
	for _, k := range keys {
		n += v.Get(k)
	}
	return n
}

func Twice(kv KV) int {
	n := 0
	for i := 0; i < 2; i++ {
		t := kv.Read()
		n += t.Get("x")
		t.End()
	}
	return n
}

// Forgot never ends its transaction: the next iteration's Read waits
// behind any writer.
func Forgot(s *store) int {
	n := 0
	for i := 0; i < 2; i++ {
		t := s.Read() // want `store.mu may still be read-locked from the previous loop iteration`
		n += t.Get("x")
	}
	return n
}

func New() KV { return &store{m: map[string]int{}} }

func NewView() *view { return &view{kv: New()} }
