// Project: etcd-io/etcd (mvcc/kvstore.go), v3.3, 2018.
// Bug: store.Restore takes s.mu and calls s.restore(), which finds a scheduled but unfinished compaction in the
// backend and resumes it through the exported s.Compact; Compact takes s.mu again, so applying a snapshot whose
// backend carries a pending compaction deadlocks the member.
package b95etcdrestorecompactfixed

import (
	"encoding/binary"
	"errors"
	"sync"
	"testing"
)

var (
	metaBucketName          = []byte("meta")
	scheduledCompactKeyName = []byte("scheduledCompactRev")
	finishedCompactKeyName  = []byte("finishedCompactRev")
	ErrCompacted            = errors.New("mvcc: required revision has been compacted")
)

type revision struct{ main, sub int64 }

func revToBytes(rev revision) []byte {
	b := make([]byte, 17)
	binary.BigEndian.PutUint64(b, uint64(rev.main))
	b[8] = '_'
	binary.BigEndian.PutUint64(b[9:], uint64(rev.sub))
	return b
}

func bytesToRev(b []byte) revision {
	return revision{main: int64(binary.BigEndian.Uint64(b[0:8])), sub: int64(binary.BigEndian.Uint64(b[9:]))}
}

// batchTx mirrors mvcc/backend.batchTx: a mutex-protected write transaction.
type batchTx struct {
	sync.Mutex
	buckets map[string]map[string][]byte
}

func (t *batchTx) UnsafePut(bucket, key, value []byte) {
	if t.buckets[string(bucket)] == nil {
		t.buckets[string(bucket)] = map[string][]byte{}
	}
	t.buckets[string(bucket)][string(key)] = value
}

func (t *batchTx) UnsafeRange(bucket, key []byte) ([][]byte, [][]byte) {
	if v, ok := t.buckets[string(bucket)][string(key)]; ok {
		return [][]byte{key}, [][]byte{v}
	}
	return nil, nil
}

type Backend interface {
	BatchTx() *batchTx
	ForceCommit()
}

type backend struct{ tx *batchTx }

func (b *backend) BatchTx() *batchTx { return b.tx }
func (b *backend) ForceCommit()      { b.tx.Lock(); b.tx.Unlock() }

type treeIndex struct{ sync.RWMutex }

func (ti *treeIndex) Compact(rev int64) map[revision]struct{} {
	ti.Lock()
	defer ti.Unlock()
	return map[revision]struct{}{}
}

type fifoScheduler struct {
	mu   sync.Mutex
	jobs []func()
}

func (f *fifoScheduler) Schedule(j func()) { f.mu.Lock(); f.jobs = append(f.jobs, j); f.mu.Unlock() }

type store struct {
	// mu read locks for txns and write locks for non-txn store changes.
	mu sync.RWMutex

	b       Backend
	kvindex *treeIndex

	// revMu protects currentRev and compactMainRev.
	revMu          sync.RWMutex
	currentRev     int64
	compactMainRev int64

	fifoSched *fifoScheduler
}

func NewStore(b Backend) *store {
	s := &store{b: b, kvindex: &treeIndex{}, currentRev: 1, compactMainRev: -1, fifoSched: &fifoScheduler{}}
	s.restore()
	return s
}

func (s *store) Compact(rev int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compactLockfree(rev)
}

// compactLockfree is Compact without taking s.mu; the caller must hold it.
func (s *store) compactLockfree(rev int64) error {
	s.revMu.Lock()
	defer s.revMu.Unlock()
	if rev <= s.compactMainRev {
		return ErrCompacted
	}
	s.compactMainRev = rev
	tx := s.b.BatchTx()
	tx.Lock()
	tx.UnsafePut(metaBucketName, scheduledCompactKeyName, revToBytes(revision{main: rev}))
	tx.Unlock()
	// ensure that desired compaction is persisted
	s.b.ForceCommit()
	keep := s.kvindex.Compact(rev)
	s.fifoSched.Schedule(func() { _ = keep })
	return nil
}

func (s *store) restore() error {
	tx := s.b.BatchTx()
	tx.Lock()
	_, finished := tx.UnsafeRange(metaBucketName, finishedCompactKeyName)
	if len(finished) != 0 {
		s.compactMainRev = bytesToRev(finished[0]).main
	}
	_, scheduled := tx.UnsafeRange(metaBucketName, scheduledCompactKeyName)
	scheduledCompact := int64(0)
	if len(scheduled) != 0 {
		scheduledCompact = bytesToRev(scheduled[0]).main
	}
	s.currentRev = 10
	tx.Unlock()

	if scheduledCompact != 0 {
		s.compactLockfree(scheduledCompact) // resume scheduled compaction
	}
	return nil
}

// Restore is used when a member applies a snapshot received from the leader.
func (s *store) Restore(b Backend) error {
	s.mu.Lock()
	defer s.mu.Unlock()

	s.b = b
	s.kvindex = &treeIndex{}
	s.currentRev = 1
	s.compactMainRev = -1
	s.fifoSched = &fifoScheduler{}

	return s.restore()
}

func newBackend(scheduledRev, finishedRev int64) *backend {
	tx := &batchTx{buckets: map[string]map[string][]byte{}}
	tx.UnsafePut(metaBucketName, finishedCompactKeyName, revToBytes(revision{main: finishedRev}))
	if scheduledRev > finishedRev {
		tx.UnsafePut(metaBucketName, scheduledCompactKeyName, revToBytes(revision{main: scheduledRev}))
	}
	return &backend{tx: tx}
}

func TestB95etcdrestorecompactFixed(t *testing.T) {
	s := NewStore(newBackend(0, 1))
	// The snapshot was taken after Compact(5) was persisted but before the compaction finished.
	snap := newBackend(5, 3)
	if err := s.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if s.compactMainRev != 5 {
		t.Fatalf("compactMainRev = %d, want 5", s.compactMainRev)
	}
}
