// Project: etcd-io/etcd (lease/lessor.go, etcdserver/v3_server.go, etcdserver/apply.go), v3.2 development, 2017 (approximate).
// Bug: lessor.Renew of an already expired lease waited on l.revokec (so the renew observes the pending revocation) while still holding le.mu, but the revocation is applied through lessor.Revoke, which must take le.mu before it deletes the lease and closes revokec, so a keepalive that arrives between expiry and the applied revoke deadlocks the lessor. The fix releases le.mu before waiting (the unlock closure in Renew).
package main

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

type LeaseID int64

type LeaseItem struct{ Key string }

var (
	ErrNotPrimary    = errors.New("not a primary lessor")
	ErrLeaseNotFound = errors.New("lease not found")
)

// RangeDeleter is the mvcc write path used to delete a lease's keys.
type RangeDeleter interface {
	TxnBegin() int64
	TxnDeleteRange(txnID int64, key, end []byte) (n, rev int64, err error)
	TxnEnd(txnID int64) error
}

type Lease struct {
	ID      LeaseID
	ttl     time.Duration
	expiry  time.Time
	itemSet map[LeaseItem]struct{}
	revokec chan struct{}
}

func (l *Lease) expired() bool                { return time.Now().After(l.expiry) }
func (l *Lease) refresh(extend time.Duration) { l.expiry = time.Now().Add(extend + l.ttl) }
func (l *Lease) Keys() []string {
	keys := make([]string, 0, len(l.itemSet))
	for k := range l.itemSet {
		keys = append(keys, k.Key)
	}
	return keys
}

type lessor struct {
	mu       sync.Mutex
	demotec  chan struct{} // non-nil while this lessor is primary
	leaseMap map[LeaseID]*Lease
	rd       RangeDeleter
	expiredC chan []*Lease
	stopC    chan struct{}
}

func newLessor(rd RangeDeleter) *lessor {
	le := &lessor{leaseMap: map[LeaseID]*Lease{}, rd: rd, expiredC: make(chan []*Lease, 16), stopC: make(chan struct{})}
	go le.runLoop()
	return le
}

func (le *lessor) isPrimary() bool { return le.demotec != nil }

func (le *lessor) Promote(extend time.Duration) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.demotec = make(chan struct{})
	for _, l := range le.leaseMap {
		l.refresh(extend)
	}
}

func (le *lessor) Grant(id LeaseID, ttl time.Duration) *Lease {
	le.mu.Lock()
	defer le.mu.Unlock()
	l := &Lease{ID: id, ttl: ttl, itemSet: map[LeaseItem]struct{}{}, revokec: make(chan struct{})}
	l.refresh(0)
	le.leaseMap[id] = l
	return l
}

func (le *lessor) Attach(id LeaseID, items []LeaseItem) {
	le.mu.Lock()
	defer le.mu.Unlock()
	for _, it := range items {
		le.leaseMap[id].itemSet[it] = struct{}{}
	}
}

// Renew renews an existing lease. If the given lease does not exist or
// has expired, an error will be returned.
func (le *lessor) Renew(id LeaseID) (time.Duration, error) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if !le.isPrimary() {
		return -1, ErrNotPrimary
	}
	demotec := le.demotec
	l := le.leaseMap[id]
	if l == nil {
		return -1, ErrLeaseNotFound
	}
	if l.expired() {
		select {
		// An expired lease might be pending for revoking or going through
		// quorum to be revoked. To be accurate, renew request must wait for the
		// deletion to complete.
		case <-l.revokec:
			return -1, ErrLeaseNotFound
		// The expired lease might fail to be revoked if the primary changes.
		case <-demotec:
			return -1, ErrNotPrimary
		case <-le.stopC:
			return -1, ErrNotPrimary
		}
	}
	l.refresh(0)
	return l.ttl, nil
}

func (le *lessor) Revoke(id LeaseID) error {
	le.mu.Lock()
	l := le.leaseMap[id]
	if l == nil {
		le.mu.Unlock()
		return ErrLeaseNotFound
	}
	defer close(l.revokec)
	// unlock before doing external work
	le.mu.Unlock()

	tid := le.rd.TxnBegin()
	keys := l.Keys()
	sort.Strings(keys)
	for _, key := range keys {
		if _, _, err := le.rd.TxnDeleteRange(tid, []byte(key), nil); err != nil {
			panic(err)
		}
	}
	le.mu.Lock()
	defer le.mu.Unlock()
	delete(le.leaseMap, l.ID)
	return le.rd.TxnEnd(tid)
}

func (le *lessor) runLoop() {
	for {
		var ls []*Lease
		le.mu.Lock()
		if le.isPrimary() {
			for _, l := range le.leaseMap {
				if l.expired() {
					ls = append(ls, l)
				}
			}
		}
		le.mu.Unlock()
		if len(ls) != 0 {
			select {
			case le.expiredC <- ls:
			default:
			}
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-le.stopC:
			return
		}
	}
}

// store is a minimal mvcc KV store implementing RangeDeleter.
type store struct {
	mu sync.Mutex
	kv map[string]string
}

func (s *store) TxnBegin() int64 { s.mu.Lock(); return 1 }
func (s *store) TxnDeleteRange(txnID int64, key, end []byte) (int64, int64, error) {
	delete(s.kv, string(key))
	return 1, 2, nil
}
func (s *store) TxnEnd(txnID int64) error { s.mu.Unlock(); return nil }

// EtcdServer proposes revocations of expired leases through raft and applies them.
type EtcdServer struct {
	lessor *lessor
	propc  chan LeaseID
}

func (s *EtcdServer) run() {
	for leases := range s.lessor.expiredC {
		for _, l := range leases {
			s.propc <- l.ID // LeaseRevoke proposal
		}
	}
}

func (s *EtcdServer) applyAll() {
	for id := range s.propc {
		time.Sleep(40 * time.Millisecond) // raft commit latency
		if err := s.lessor.Revoke(id); err != nil && err != ErrLeaseNotFound {
			fmt.Println("revoke:", err)
		}
	}
}

func (s *EtcdServer) LeaseRenew(id LeaseID) (time.Duration, error) { return s.lessor.Renew(id) }

func main() {
	kv := &store{kv: map[string]string{"/session/a": "1"}}
	s := &EtcdServer{lessor: newLessor(kv), propc: make(chan LeaseID, 16)}
	s.lessor.Promote(0)
	l := s.lessor.Grant(7, 30*time.Millisecond)
	s.lessor.Attach(l.ID, []LeaseItem{{Key: "/session/a"}})
	go s.run()
	go s.applyAll()

	// The client's keepalive arrives just after the lease expired.
	time.Sleep(45 * time.Millisecond)
	ttl, err := s.LeaseRenew(l.ID)
	fmt.Println("renew:", ttl, err)
	close(s.lessor.stopC)
}
