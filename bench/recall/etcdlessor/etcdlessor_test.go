// Project: etcd-io/etcd (lease/lessor.go + mvcc backend batchTx).
// Bug (approximate): lessor.Revoke opened a write txn (which holds the
// backend batchTx lock), deleted the attached keys and only then took le.mu to
// drop the lease; concurrently lessor.Grant held le.mu and persisted the new
// lease via Lease.persistTo -> BatchTx().Lock(): AB-BA between le.mu and
// the batchTx mutex.
// Fix: Revoke acquires le.mu before opening the write txn (le.mu -> batchTx order).
package etcdlessor

import (
	"errors"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

type LeaseID int64

var (
	ErrLeaseNotFound = errors.New("lease not found")
	ErrLeaseExists   = errors.New("lease already exists")
)

type batchTx struct {
	sync.Mutex
	buckets map[string]map[string][]byte
}

func (t *batchTx) UnsafePut(bucket, key string, v []byte) {
	if t.buckets[bucket] == nil {
		t.buckets[bucket] = map[string][]byte{}
	}
	t.buckets[bucket][key] = v
}

func (t *batchTx) UnsafeDelete(bucket, key string) { delete(t.buckets[bucket], key) }

type backend struct{ tx *batchTx }

func (b *backend) BatchTx() *batchTx { return b.tx }

// TxnDelete is the subset of mvcc.TxnWrite the lessor uses.
type TxnDelete interface {
	DeleteRange(key, end []byte) (n, rev int64)
	End()
}

type RangeDeleter func() TxnDelete

type store struct {
	mu  sync.RWMutex
	b   *backend
	rev int64
}

type storeTxnWrite struct {
	s  *store
	tx *batchTx
}

func (s *store) Write() TxnDelete {
	s.mu.RLock()
	tx := s.b.BatchTx()
	tx.Lock()
	return &storeTxnWrite{s: s, tx: tx}
}

func (tw *storeTxnWrite) DeleteRange(key, end []byte) (int64, int64) {
	tw.tx.UnsafeDelete("key", string(key))
	tw.s.rev++
	return 1, tw.s.rev
}

func (tw *storeTxnWrite) End() {
	tw.tx.Unlock()
	tw.s.mu.RUnlock()
}

type Lease struct {
	ID      LeaseID
	ttl     int64
	mu      sync.RWMutex
	itemSet map[string]struct{}
}

func (l *Lease) Keys() []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	keys := make([]string, 0, len(l.itemSet))
	for k := range l.itemSet {
		keys = append(keys, k)
	}
	return keys
}

func (l *Lease) persistTo(b *backend) {
	tx := b.BatchTx()
	tx.Lock()
	tx.UnsafePut("lease", strconv.FormatInt(int64(l.ID), 10), []byte(strconv.FormatInt(l.ttl, 10)))
	tx.Unlock()
}

type lessor struct {
	mu       sync.RWMutex
	leaseMap map[LeaseID]*Lease
	b        *backend
	rd       RangeDeleter
}

func (le *lessor) Grant(id LeaseID, ttl int64) (*Lease, error) {
	l := &Lease{ID: id, ttl: ttl, itemSet: map[string]struct{}{}}
	le.mu.Lock()
	defer le.mu.Unlock()
	if _, ok := le.leaseMap[id]; ok {
		return nil, ErrLeaseExists
	}
	time.Sleep(50 * time.Millisecond) // compute expiry / min TTL checks
	le.leaseMap[id] = l
	l.persistTo(le.b)
	return l, nil
}

func (le *lessor) Revoke(id LeaseID) error {
	le.mu.RLock()
	l := le.leaseMap[id]
	le.mu.RUnlock()
	if l == nil {
		return ErrLeaseNotFound
	}
	txn := le.rd()
	keys := l.Keys()
	sort.Strings(keys)
	for _, key := range keys {
		txn.DeleteRange([]byte(key), nil)
	}
	time.Sleep(50 * time.Millisecond) // many attached keys
	le.mu.Lock()                      // BUG: le.mu taken while the txn holds the batchTx lock
	defer le.mu.Unlock()
	delete(le.leaseMap, l.ID)
	le.b.BatchTx().UnsafeDelete("lease", strconv.FormatInt(int64(l.ID), 10))
	txn.End()
	return nil
}

func TestRevokeVsGrant(t *testing.T) {
	s := &store{b: &backend{tx: &batchTx{buckets: map[string]map[string][]byte{}}}}
	le := &lessor{leaseMap: map[LeaseID]*Lease{}, b: s.b, rd: s.Write}
	l, err := le.Grant(1, 10)
	if err != nil {
		t.Fatal(err)
	}
	l.itemSet["foo"], l.itemSet["bar"] = struct{}{}, struct{}{}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := le.Revoke(1); err != nil {
			t.Errorf("revoke: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		if _, err := le.Grant(2, 30); err != nil {
			t.Errorf("grant: %v", err)
		}
	}()
	wg.Wait()
}
