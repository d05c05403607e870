// Reconstruction of etcd-io/etcd#22184, "mvcc: lock-order inversion in
// progressIfSync can deadlock the apply loop" (fix proposed in
// etcd-io/etcd#22185; the same inversion was reported in etcd-io/etcd#21871).
//
// watchableStore.mu documents that it "should never be locked before locking
// store.mu". progressIfSync, which answers a watch progress request, takes
// watchableStore.mu.RLock and then computes s.rev(), which reaches
// readView.Rev, opens a read transaction and read-locks store.mu. A write
// transaction of the apply loop holds store.mu.RLock from store.Write until
// watchableStoreTxnWrite.End, and End takes watchableStore.mu.Lock before it
// ends the inner transaction. Two read locks do not conflict, but the
// snapshot sender (createMergedSnapshotMessage) calls KV().Commit, which
// queues a writer on store.mu behind the apply loop's read lock. From then on
// the progress request's store.mu.RLock waits behind that writer, the writer
// waits for the apply loop, and the apply loop waits in End for the
// watchableStore lock the progress request holds: three goroutines, three
// locks, one cycle.
//
// The fixed twin reads the current revision under store.revMu only, as the
// proposed fix does, so progressIfSync no longer asks for store.mu while it
// holds watchableStore.mu.
package main

import (
	"fmt"
	"sync"
	"time"
)

type KeyValue struct {
	Key, Value  string
	ModRevision int64
}

type store struct {
	ReadView
	mu         sync.RWMutex // read: txns; write: Commit, Compact, Restore
	revMu      sync.RWMutex
	currentRev int64
	kvs        map[string]KeyValue
	committed  int64
}

type ReadView interface{ Rev() int64 }

type readView struct{ kv *store }

func (rv *readView) Rev() int64 {
	tr := rv.kv.Read()
	defer tr.End()
	return tr.Rev()
}

type storeTxnRead struct {
	s   *store
	rev int64
}

func (tr *storeTxnRead) Rev() int64 { return tr.rev }
func (tr *storeTxnRead) End()       { tr.s.mu.RUnlock() }

func (s *store) Read() *storeTxnRead {
	s.mu.RLock()
	s.revMu.RLock()
	rev := s.currentRev
	s.revMu.RUnlock()
	return &storeTxnRead{s: s, rev: rev}
}

type storeTxnWrite struct {
	storeTxnRead
	changes []KeyValue
}

func (s *store) Write() *storeTxnWrite {
	s.mu.RLock()
	return &storeTxnWrite{storeTxnRead: storeTxnRead{s: s, rev: s.currentRev}}
}

func (tw *storeTxnWrite) Put(key, value string) {
	kv := KeyValue{Key: key, Value: value, ModRevision: tw.rev + 1}
	tw.s.kvs[key] = kv
	tw.changes = append(tw.changes, kv)
}

func (tw *storeTxnWrite) End() {
	if len(tw.changes) != 0 {
		tw.s.revMu.Lock()
		tw.s.currentRev++
		tw.s.revMu.Unlock()
	}
	tw.s.mu.RUnlock()
}

func (s *store) Commit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.committed = s.currentRev // b.ForceCommit()
}

type watcher struct {
	id     int64
	minRev int64
	ch     chan int64
}

type watchableStore struct {
	*store
	// mu protects watcher groups and batches. It should never be locked
	// before locking store.mu to avoid deadlock.
	mu     sync.RWMutex
	synced map[int64]*watcher
}

func newWatchableStore() *watchableStore {
	s := &store{kvs: map[string]KeyValue{}, currentRev: 1}
	s.ReadView = &readView{s}
	return &watchableStore{store: s, synced: map[int64]*watcher{}}
}

func (s *watchableStore) rev() int64 { return s.store.Rev() }

type watchableStoreTxnWrite struct {
	*storeTxnWrite
	s *watchableStore
}

func (s *watchableStore) Write() *watchableStoreTxnWrite {
	return &watchableStoreTxnWrite{s.store.Write(), s}
}

func (tw *watchableStoreTxnWrite) End() {
	if len(tw.changes) == 0 {
		tw.storeTxnWrite.End()
		return
	}
	// end write txn under watchable store lock so the updates are visible
	// when asynchronous event posting checks the current store revision
	tw.s.mu.Lock()
	tw.s.notify(tw.rev+1, tw.changes)
	tw.storeTxnWrite.End()
	tw.s.mu.Unlock()
}

func (s *watchableStore) notify(rev int64, evs []KeyValue) {
	for _, w := range s.synced {
		w.minRev = rev + 1
	}
}

// progressIfSync sends a progress notification if all watchers are synced.
func (s *watchableStore) progressIfSync(watchers map[int64]*watcher, responseWatchID int64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rev := s.rev()
	for id := range watchers {
		if _, ok := s.synced[id]; !ok {
			return false
		}
	}
	watchers[responseWatchID].ch <- rev
	return true
}

func main() {
	ws := newWatchableStore()
	w := &watcher{id: 1, minRev: 2, ch: make(chan int64, 1)}
	ws.synced[w.id] = w

	snapDone := make(chan struct{})
	go func() { // raft snapshot sender: createMergedSnapshotMessage
		defer close(snapDone)
		time.Sleep(10 * time.Millisecond)
		ws.Commit()
	}()

	progressDone := make(chan struct{})
	go func() { // serverWatchStream: WatchRequest_ProgressRequest
		defer close(progressDone)
		time.Sleep(20 * time.Millisecond)
		ws.progressIfSync(map[int64]*watcher{w.id: w}, w.id)
	}()

	// The apply loop applies a put entry in one write transaction.
	txn := ws.Write()
	txn.Put("/registry/pods/default/web-0", "v2")
	time.Sleep(30 * time.Millisecond) // applying the rest of the entry's ops
	txn.End()

	<-snapDone
	<-progressDone
	fmt.Println("progress notification at revision", <-w.ch, "committed", ws.committed)
}
