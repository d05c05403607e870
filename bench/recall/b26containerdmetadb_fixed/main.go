// Project: containerd (metadata/db.go + gc/scheduler)
// Bug: DB.Update runs the registered mutation callbacks while still holding
// m.wlock.RLock; the GC scheduler callback collects synchronously once the
// deletion threshold is reached, and GarbageCollect takes m.wlock.Lock.
// Fix: release the read lock before publishing mutation events.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

type Tx struct {
	buckets map[string]map[string]string
}

func (tx *Tx) Bucket(name string) map[string]string {
	b, ok := tx.buckets[name]
	if !ok {
		b = make(map[string]string)
		tx.buckets[name] = b
	}
	return b
}

type boltDB struct {
	mu      sync.Mutex
	buckets map[string]map[string]string
}

func (b *boltDB) Update(fn func(*Tx) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fn(&Tx{buckets: b.buckets})
}

type GCStats struct {
	MetaD   time.Duration
	Removed int
}

type DB struct {
	db                *boltDB
	wlock             sync.RWMutex
	dirty             uint32
	dirtySS           map[string]struct{}
	dirtyCS           bool
	mutationCallbacks []func(bool)
}

func NewDB() *DB {
	return &DB{db: &boltDB{buckets: make(map[string]map[string]string)}, dirtySS: make(map[string]struct{})}
}

func (m *DB) RegisterMutationCallback(fn func(bool)) {
	m.wlock.Lock()
	m.mutationCallbacks = append(m.mutationCallbacks, fn)
	m.wlock.Unlock()
}

func (m *DB) Update(fn func(*Tx) error) error {
	m.wlock.RLock()
	err := m.db.Update(fn)
	dirty := m.dirtyCS || len(m.dirtySS) > 0
	callbacks := m.mutationCallbacks
	m.wlock.RUnlock()
	if err == nil {
		for _, fn := range callbacks {
			fn(dirty)
		}
	}
	return err
}

func (m *DB) markDirty(snapshotter string) {
	m.dirtySS[snapshotter] = struct{}{}
}

func (m *DB) GarbageCollect(ctx context.Context) (GCStats, error) {
	m.wlock.Lock()
	t1 := time.Now()
	removed := 0
	err := m.db.Update(func(tx *Tx) error {
		for k, v := range tx.Bucket("v1/default/snapshots/overlayfs") {
			if v == "" {
				delete(tx.Bucket("v1/default/snapshots/overlayfs"), k)
				removed++
			}
		}
		return nil
	})
	m.dirtySS = make(map[string]struct{})
	m.dirtyCS = false
	m.wlock.Unlock()
	return GCStats{MetaD: time.Since(t1), Removed: removed}, err
}

type collector interface {
	GarbageCollect(context.Context) (GCStats, error)
}

type gcScheduler struct {
	c                 collector
	deletionThreshold int
	mu                sync.Mutex
	deletes           int
	mutations         int
	lastStats         GCStats
}

func newScheduler(c collector, deletionThreshold int) *gcScheduler {
	return &gcScheduler{c: c, deletionThreshold: deletionThreshold}
}

func (s *gcScheduler) mutationCallback(dirty bool) {
	s.mu.Lock()
	s.mutations++
	if dirty {
		s.deletes++
	}
	trigger := s.deletionThreshold > 0 && s.deletes >= s.deletionThreshold
	if trigger {
		s.deletes = 0
	}
	s.mu.Unlock()
	if trigger {
		stats, err := s.c.GarbageCollect(context.Background())
		if err != nil {
			log.Printf("garbage collection failed: %v", err)
			return
		}
		s.mu.Lock()
		s.lastStats = stats
		s.mu.Unlock()
	}
}

var errNotFound = errors.New("snapshot not found")

func removeSnapshot(db *DB, key string) error {
	return db.Update(func(tx *Tx) error {
		b := tx.Bucket("v1/default/snapshots/overlayfs")
		if _, ok := b[key]; !ok {
			return errNotFound
		}
		b[key] = ""
		db.markDirty("overlayfs")
		return nil
	})
}

func main() {
	db := NewDB()
	sched := newScheduler(db, 2)
	db.RegisterMutationCallback(sched.mutationCallback)

	for i := 0; i < 3; i++ {
		key := fmt.Sprintf("sha256:layer%d", i)
		if err := db.Update(func(tx *Tx) error {
			tx.Bucket("v1/default/snapshots/overlayfs")[key] = "committed"
			return nil
		}); err != nil {
			log.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if err := removeSnapshot(db, fmt.Sprintf("sha256:layer%d", i)); err != nil {
			log.Fatal(err)
		}
	}
	sched.mu.Lock()
	fmt.Printf("mutations=%d last gc removed=%d\n", sched.mutations, sched.lastStats.Removed)
	sched.mu.Unlock()
}
