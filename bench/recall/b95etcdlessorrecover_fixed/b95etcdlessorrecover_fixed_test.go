// Project: etcd-io/etcd (lease/lessor.go, storage/backend/backend.go, batch_tx.go), v3 development, January 2016 (issue #4156, approximate).
// Bug: NewLessor calls initAndRecover, which locks the backend batchTx with a deferred Unlock, loads the persisted
// leases and then calls b.ForceCommit(); ForceCommit commits through batchTx.Commit, which locks the same batchTx
// mutex again, so creating a lessor (and every server start) hangs.
package b95etcdlessorrecoverfixed

import (
	"encoding/binary"
	"math"
	"sync"
	"testing"
	"time"
)

var leaseBucketName = []byte("lease")

type LeaseID int64

type LeaseItem struct{ Key string }

type Lease struct {
	ID      LeaseID
	TTL     int64
	itemSet map[LeaseItem]struct{}
	expiry  time.Time
}

var forever = time.Unix(math.MaxInt64>>1, 0)

// BatchTx mirrors storage/backend.BatchTx.
type BatchTx interface {
	Lock()
	Unlock()
	UnsafeCreateBucket(name []byte)
	UnsafePut(bucket, key, value []byte)
	UnsafeRange(bucket, key, endKey []byte, limit int64) (keys [][]byte, vals [][]byte)
	Commit()
}

type batchTx struct {
	sync.Mutex
	buckets map[string]map[string][]byte
	pending int
}

func (t *batchTx) UnsafeCreateBucket(name []byte) {
	if t.buckets[string(name)] == nil {
		t.buckets[string(name)] = map[string][]byte{}
	}
}

func (t *batchTx) UnsafePut(bucket, key, value []byte) {
	t.buckets[string(bucket)][string(key)] = value
	t.pending++
}

func (t *batchTx) UnsafeRange(bucket, key, endKey []byte, limit int64) ([][]byte, [][]byte) {
	var ks, vs [][]byte
	for k, v := range t.buckets[string(bucket)] {
		if k >= string(key) && k < string(endKey) {
			ks, vs = append(ks, []byte(k)), append(vs, v)
		}
	}
	return ks, vs
}

// Commit commits a previous tx and begins a new writable one.
func (t *batchTx) Commit() {
	t.Lock()
	defer t.Unlock()
	t.commit()
}

func (t *batchTx) commit() { t.pending = 0 }

type Backend interface {
	BatchTx() BatchTx
	ForceCommit()
}

type backend struct{ batchTx *batchTx }

func (b *backend) BatchTx() BatchTx { return b.batchTx }

// ForceCommit forces the current batching tx to commit.
func (b *backend) ForceCommit() { b.batchTx.Commit() }

func int64ToBytes(n int64) []byte {
	bytes := make([]byte, 8)
	binary.BigEndian.PutUint64(bytes, uint64(n))
	return bytes
}

type lessor struct {
	mu       sync.Mutex
	leaseMap map[LeaseID]*Lease
	b        Backend
}

func NewLessor(b Backend) *lessor {
	l := &lessor{leaseMap: make(map[LeaseID]*Lease), b: b}
	l.initAndRecover()
	return l
}

func (le *lessor) initAndRecover() {
	tx := le.b.BatchTx()
	tx.Lock()

	tx.UnsafeCreateBucket(leaseBucketName)
	_, vs := tx.UnsafeRange(leaseBucketName, int64ToBytes(0), int64ToBytes(math.MaxInt64), 0)
	for i := range vs {
		ID := LeaseID(binary.BigEndian.Uint64(vs[i][:8]))
		le.leaseMap[ID] = &Lease{
			ID:  ID,
			TTL: int64(binary.BigEndian.Uint64(vs[i][8:])),
			// itemSet will be filled in when recover key-value pairs
			// set expiry to forever, refresh when promoted
			itemSet: make(map[LeaseItem]struct{}),
			expiry:  forever,
		}
	}
	tx.Unlock()

	le.b.ForceCommit()
}

func (le *lessor) Grant(id LeaseID, ttl int64) *Lease {
	le.mu.Lock()
	defer le.mu.Unlock()
	l := &Lease{ID: id, TTL: ttl, itemSet: make(map[LeaseItem]struct{}), expiry: forever}
	le.leaseMap[id] = l
	tx := le.b.BatchTx()
	tx.Lock()
	tx.UnsafePut(leaseBucketName, int64ToBytes(int64(id)), append(int64ToBytes(int64(id)), int64ToBytes(ttl)...))
	tx.Unlock()
	return l
}

func TestB95etcdlessorrecoverFixed(t *testing.T) {
	be := &backend{batchTx: &batchTx{buckets: map[string]map[string][]byte{}}}
	le := NewLessor(be)
	le.Grant(1, 10)
	le.Grant(2, 20)

	// A restarted member recovers the persisted leases from the same backend.
	le2 := NewLessor(be)
	if len(le2.leaseMap) != 2 {
		t.Fatalf("recovered %d leases, want 2", len(le2.leaseMap))
	}
}
