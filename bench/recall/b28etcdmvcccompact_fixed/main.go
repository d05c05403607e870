// Project: etcd-io/etcd (mvcc/kvstore.go, mvcc/watchable_store.go, pkg/schedule/schedule.go)
// Bug:     PR #11817 "mvcc: fix a deadlock bug in mvcc" (backported to 3.3/3.4 as #11856/#11855).
// A follower applying a snapshot runs watchableStore.Restore -> store.Restore,
// which takes store.mu.Lock(), closes stopc and calls fifoSched.Stop(); Stop
// cancels the scheduler and blocks on <-donec until the running job returns. If
// that job is a compaction it sees the closed stopc in scheduleCompaction and
// falls into compactBarrier(nil, ch), which takes store.mu.Lock() before looking
// at stopc. Restore holds store.mu waiting for the job, the job waits for store.mu.
// Deadlocking wait: <-f.donec in fifo.Stop (job blocked in compactBarrier's s.mu.Lock()).
// FIXED twin (#11817): compactBarrier checks stopc first and only then takes s.mu.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Job func(ctx context.Context)

type Scheduler interface {
	Schedule(j Job)
	Stop()
}

type fifo struct {
	mu       sync.Mutex
	resume   chan struct{}
	pendings []Job
	ctx      context.Context
	cancel   context.CancelFunc
	donec    chan struct{}
}

func NewFIFOScheduler() Scheduler {
	f := &fifo{resume: make(chan struct{}, 1), donec: make(chan struct{})}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	go f.run()
	return f
}

func (f *fifo) Schedule(j Job) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pendings = append(f.pendings, j)
	select {
	case f.resume <- struct{}{}:
	default:
	}
}

func (f *fifo) Stop() {
	f.mu.Lock()
	f.cancel()
	f.cancel = nil
	f.mu.Unlock()
	<-f.donec // waits for the running job to return
}

func (f *fifo) run() {
	defer close(f.donec)
	for {
		var todo Job
		f.mu.Lock()
		if len(f.pendings) != 0 {
			todo = f.pendings[0]
		}
		f.mu.Unlock()
		if todo == nil {
			select {
			case <-f.resume:
				continue
			case <-f.ctx.Done():
				return // (pending jobs are run once more with the cancelled ctx)
			}
		}
		todo(f.ctx)
		f.mu.Lock()
		f.pendings = f.pendings[1:]
		f.mu.Unlock()
	}
}

type store struct {
	mu             sync.RWMutex // read locks for txns, write locks for non-txn store changes
	compactMainRev int64
	fifoSched      Scheduler
	stopc          chan struct{}
}

func (s *store) compactBarrier(ctx context.Context, ch chan struct{}) {
	if ctx == nil || ctx.Err() != nil {
		select {
		case <-s.stopc:
		default:
			s.mu.Lock()
			f := func(ctx context.Context) { s.compactBarrier(ctx, ch) }
			s.fifoSched.Schedule(f)
			s.mu.Unlock()
		}
		return
	}
	close(ch)
}

func (s *store) Compact(rev int64) (<-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compactMainRev = rev
	ch := make(chan struct{})
	var j = func(ctx context.Context) {
		if ctx.Err() != nil {
			s.compactBarrier(ctx, ch)
			return
		}
		if !s.scheduleCompaction(rev) {
			s.compactBarrier(nil, ch)
			return
		}
		close(ch)
	}
	s.fifoSched.Schedule(j)
	return ch, nil
}

// scheduleCompaction deletes compacted revisions from the backend batch by batch.
func (s *store) scheduleCompaction(compactMainRev int64) bool {
	for batch := 0; batch < 20; batch++ {
		select {
		case <-time.After(10 * time.Millisecond):
		case <-s.stopc:
			return false
		}
	}
	return true
}

func (s *store) Restore() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.stopc)
	s.fifoSched.Stop()
	s.compactMainRev = -1 // index is then rebuilt from the new backend
	s.fifoSched = NewFIFOScheduler()
	s.stopc = make(chan struct{})
	return nil
}

type watchableStore struct{ *store } // watcher groups and their mutex elided

func (s *watchableStore) Restore() error { return s.store.Restore() }

func main() {
	kv := &watchableStore{store: &store{compactMainRev: -1, fifoSched: NewFIFOScheduler(), stopc: make(chan struct{})}}
	kv.Compact(50) // applyCompaction in the raft apply loop
	time.Sleep(25 * time.Millisecond)
	kv.Restore() // EtcdServer.applySnapshot
	fmt.Println("snapshot applied")
}
