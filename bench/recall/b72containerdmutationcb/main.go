// Command b72containerdmutationcb models containerd's metadata database
// (metadata/db.go) together with the garbage collection scheduler plugin
// (gc/scheduler) that subscribes to it through DB.RegisterMutationCallback.
//
// Modelled on containerd, no specific upstream bug. In containerd the
// mutation callbacks are invoked from DB.Update while the write lock wlock is
// held for reading, and DB.GarbageCollect takes wlock for writing. Upstream
// the scheduler's callback only posts an event to the scheduler loop. In this
// program the scheduler runs an immediate collection from the callback once
// enough deletions were seen, so the goroutine that called DB.Update asks for
// wlock.Lock while it still holds wlock.RLock and blocks forever.
//
// The fixed twin only records that a collection is due from the callback and
// lets the scheduler tick run it after Update has returned.
package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type Tx struct {
	buckets map[string]map[string]string
}

func (tx *Tx) Bucket(name string) map[string]string {
	b, ok := tx.buckets[name]
	if !ok {
		b = map[string]string{}
		tx.buckets[name] = b
	}
	return b
}

type boltDB struct {
	mu   sync.Mutex
	data map[string]map[string]string
}

func (b *boltDB) Update(fn func(*Tx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fn(&Tx{buckets: b.data})
}

type GCStats struct {
	Removed  int
	Duration time.Duration
}

type DB struct {
	db                *boltDB
	wlock             sync.RWMutex
	dirty             atomic.Uint32
	mutationCallbacks []func(bool)
}

func (m *DB) RegisterMutationCallback(fn func(bool)) {
	m.wlock.Lock()
	m.mutationCallbacks = append(m.mutationCallbacks, fn)
	m.wlock.Unlock()
}

func (m *DB) Update(fn func(*Tx) error) error {
	m.wlock.RLock()
	defer m.wlock.RUnlock()
	err := m.db.Update(fn)
	if err == nil {
		m.publishMutation()
	}
	return err
}

func (m *DB) publishMutation() {
	dirty := m.dirty.Load() > 0
	for _, fn := range m.mutationCallbacks {
		fn(dirty)
	}
}

func (m *DB) exclusive() func() {
	m.wlock.Lock()
	return m.wlock.Unlock
}

func (m *DB) GarbageCollect(ctx context.Context) (GCStats, error) {
	release := m.exclusive()
	defer release()
	start := time.Now()
	removed := 0
	err := m.db.Update(func(tx *Tx) error {
		content := tx.Bucket("content")
		for dgst, label := range content {
			if label == "gc.deleted" {
				delete(content, dgst)
				removed++
			}
		}
		return nil
	})
	m.dirty.Store(0)
	return GCStats{Removed: removed, Duration: time.Since(start)}, err
}

type contentStore struct {
	db *DB
}

func (cs *contentStore) Commit(dgst string) error {
	return cs.db.Update(func(tx *Tx) error {
		tx.Bucket("content")[dgst] = "gc.root"
		return nil
	})
}

func (cs *contentStore) Delete(dgst string) error {
	return cs.db.Update(func(tx *Tx) error {
		tx.Bucket("content")[dgst] = "gc.deleted"
		cs.db.dirty.Add(1)
		return nil
	})
}

type collector interface {
	RegisterMutationCallback(func(bool))
	GarbageCollect(context.Context) (GCStats, error)
}

type gcScheduler struct {
	c                 collector
	mutationThreshold int32
	deletions         atomic.Int32
	due               atomic.Bool
}

func newScheduler(c collector, threshold int32) *gcScheduler {
	s := &gcScheduler{c: c, mutationThreshold: threshold}
	c.RegisterMutationCallback(s.mutationCallback)
	return s
}

func (s *gcScheduler) mutationCallback(dirty bool) {
	if !dirty {
		return
	}
	if s.deletions.Add(1) >= s.mutationThreshold {
		s.deletions.Store(0)
		s.trigger(context.Background())
	}
}

func (s *gcScheduler) trigger(ctx context.Context) {
	s.collect(ctx)
}

func (s *gcScheduler) tick(ctx context.Context) {
	if s.due.Swap(false) {
		s.collect(ctx)
	}
}

func (s *gcScheduler) collect(ctx context.Context) {
	stats, err := s.c.GarbageCollect(ctx)
	if err != nil {
		fmt.Println("gc failed:", err)
		return
	}
	fmt.Printf("garbage collected %d blobs in %v\n", stats.Removed, stats.Duration.Round(time.Millisecond))
}

func main() {
	db := &DB{db: &boltDB{data: map[string]map[string]string{}}}
	sched := newScheduler(db, 2)
	cs := &contentStore{db: db}

	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 4; j++ {
				if err := cs.Commit(fmt.Sprintf("sha256:%02d%02d", i, j)); err != nil {
					fmt.Println("commit:", err)
				}
			}
		}(i)
	}
	wg.Wait()

	for _, dgst := range []string{"sha256:0001", "sha256:0102", "sha256:0203"} {
		if err := cs.Delete(dgst); err != nil {
			fmt.Println("delete:", err)
		}
		sched.tick(context.Background())
	}
	fmt.Println("content store pruned")
}
