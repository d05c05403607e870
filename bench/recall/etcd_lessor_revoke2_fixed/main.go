// Project: etcd (server/lease/lessor.go) -- fixed twin
// Fix applied: etcd-io/etcd#14080, Revoke removes the lease from leaseMap under le.mu and releases
// it before opening the write txn, so le.mu is never acquired while the batchTx lock is held.

package main

import (
	"fmt"
	"sort"
	"sync"
)

type LeaseID int64

type batchTx struct {
	sync.Mutex
	buckets map[string]map[string]string
}

func (t *batchTx) UnsafePut(bucket, key, val string) { t.buckets[bucket][key] = val }
func (t *batchTx) UnsafeDelete(bucket, key string)   { delete(t.buckets[bucket], key) }

type backend struct{ tx *batchTx }

func (b *backend) BatchTx() *batchTx { return b.tx }

type store struct{ b *backend }

type storeTxnWrite struct{ tx *batchTx }

func (s *store) Write() *storeTxnWrite {
	tx := s.b.BatchTx()
	tx.Lock()
	return &storeTxnWrite{tx: tx}
}

func (tw *storeTxnWrite) DeleteRange(key string) { tw.tx.UnsafeDelete("key", key) }
func (tw *storeTxnWrite) End()                   { tw.tx.Unlock() }

type RangeDeleter func() *storeTxnWrite

type Lease struct {
	ID    LeaseID
	ttl   int64
	items []string
}

func (l *Lease) persistTo(b *backend) {
	b.BatchTx().Lock()
	b.BatchTx().UnsafePut("lease", fmt.Sprint(l.ID), fmt.Sprint(l.ttl))
	b.BatchTx().Unlock()
}

func (l *Lease) Keys() []string { return append([]string(nil), l.items...) }

type lessor struct {
	mu       sync.RWMutex
	leaseMap map[LeaseID]*Lease
	rd       RangeDeleter
	b        *backend
}

func (le *lessor) Grant(id LeaseID, ttl int64) (*Lease, error) {
	l := &Lease{ID: id, ttl: ttl}
	le.mu.Lock()
	defer le.mu.Unlock()
	le.leaseMap[id] = l
	l.persistTo(le.b)
	return l, nil
}

func (le *lessor) Revoke(id LeaseID) error {
	le.mu.Lock()
	l := le.leaseMap[id]
	if l == nil {
		le.mu.Unlock()
		return fmt.Errorf("lease not found")
	}
	// Delete the lease outside the transaction lock, otherwise this may deadlock
	// with Grant or Checkpoint, which take le.mu and then the batchTx lock.
	delete(le.leaseMap, id)
	le.mu.Unlock()

	txn := le.rd()
	keys := l.Keys()
	sort.StringSlice(keys).Sort()
	for _, key := range keys {
		txn.DeleteRange(key)
	}

	le.b.BatchTx().UnsafeDelete("lease", fmt.Sprint(l.ID))
	txn.End()
	return nil
}

func main() {
	b := &backend{tx: &batchTx{buckets: map[string]map[string]string{"key": {}, "lease": {}}}}
	s := &store{b: b}
	le := &lessor{leaseMap: map[LeaseID]*Lease{}, b: b, rd: func() *storeTxnWrite { return s.Write() }}

	for i := LeaseID(1); i <= 2000; i++ {
		l, _ := le.Grant(i, 60)
		l.items = append(l.items, fmt.Sprintf("/registry/pods/p%d", i))
	}
	done := make(chan struct{})
	go func() { // expired leases revoked by the leader
		defer close(done)
		for i := LeaseID(1); i <= 2000; i++ {
			le.Revoke(i)
		}
	}()
	for i := LeaseID(2001); i <= 4000; i++ { // LeaseGrant requests applied concurrently
		le.Grant(i, 60)
	}
	<-done
	fmt.Println("leases:", len(le.leaseMap))
}
