// Project: etcd (lease/lessor.go + mvcc/kvstore_txn.go)
// FIXED twin of etcd_lessor_revoke: Revoke looks the lease up under le.mu,
// releases it before opening the txn via le.rd() (store.mu), and re-takes
// le.mu only while the txn is open, giving the same store.mu -> le.mu order
// as Put -> Attach.
package main

import (
	"errors"
	"sync"
	"time"
)

type LeaseID int64

var ErrLeaseNotFound = errors.New("lease not found")

type TxnDelete interface {
	DeleteRange(key, end []byte) (n, rev int64)
	End()
}

// RangeDeleter is a TxnDelete constructor.
type RangeDeleter func() TxnDelete

type Lease struct {
	ID   LeaseID
	keys map[string]struct{}
}

type lessor struct {
	mu       sync.RWMutex
	leaseMap map[LeaseID]*Lease
	rd       RangeDeleter
}

func (le *lessor) SetRangeDeleter(rd RangeDeleter) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.rd = rd
}

func (le *lessor) Revoke(id LeaseID) error {
	le.mu.Lock()
	l := le.leaseMap[id]
	rd := le.rd
	le.mu.Unlock() // unlock before doing external work
	if l == nil {
		return ErrLeaseNotFound
	}
	txn := rd() // store.mu
	defer txn.End()
	le.mu.Lock() // store.mu -> le.mu, same order as Put
	defer le.mu.Unlock()
	for key := range l.keys {
		txn.DeleteRange([]byte(key), nil)
	}
	delete(le.leaseMap, l.ID)
	return nil
}

func (le *lessor) Attach(id LeaseID, key string) error {
	le.mu.Lock()
	defer le.mu.Unlock()
	if l := le.leaseMap[id]; l != nil {
		l.keys[key] = struct{}{}
		return nil
	}
	return ErrLeaseNotFound
}

type store struct {
	mu      sync.RWMutex
	le      *lessor
	kvindex map[string]int64
}

type storeTxnWrite struct{ s *store }

func (s *store) Write() *storeTxnWrite {
	s.mu.Lock()
	return &storeTxnWrite{s: s}
}

func (tw *storeTxnWrite) DeleteRange(key, end []byte) (int64, int64) {
	delete(tw.s.kvindex, string(key))
	return 1, 0
}

func (tw *storeTxnWrite) End() { tw.s.mu.Unlock() }

func (s *store) Put(key string, lease LeaseID) {
	tw := s.Write()
	defer tw.End()
	s.kvindex[key]++
	if lease != 0 {
		s.le.Attach(lease, key) // le.mu while store.mu is held
	}
}

func newStore(le *lessor) *store {
	s := &store{le: le, kvindex: make(map[string]int64)}
	le.SetRangeDeleter(func() TxnDelete { return s.Write() })
	return s
}

func main() {
	le := &lessor{leaseMap: map[LeaseID]*Lease{1: {ID: 1, keys: map[string]struct{}{}}}}
	s := newStore(le)
	go func() {
		for {
			s.Put("foo", 1)
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		le.Revoke(1)
	}()
	<-done
	time.Sleep(10 * time.Millisecond)
}
