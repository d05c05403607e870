// Project: moby/buildkit (the Docker/Moby image builder), v0.3 development
// (August 2018).
// Files/functions: cache/manager.go (cacheManager.Prune, cacheManager.prune),
// cache/refs.go (mutableRef.commit, cacheRecord with its shared *sync.Mutex,
// cacheRecord.isDead).
// PR moby/buildkit#600 "fixes for cache prune" ("Fixes possible case for
// deadlock where 2 records share the mutex").
//
// When a mutable ref is committed, mutableRef.commit creates the immutable
// cacheRecord with mu: sr.mu, so the mutable record and its equal immutable
// record share one *sync.Mutex. prune holds cm.mu and walks cm.records,
// locking each record's mu. Records that are selected for deletion are
// appended to toDelete and deliberately left locked until the deletion pass
// ("leave the record locked"). If the map iteration reaches a released
// mutable record first, it is selected and stays locked; when the walk
// reaches the committed twin, cr.mu.Lock() locks the very same mutex again
// from the same goroutine and `docker builder prune` (and every build
// waiting on cm.mu) hangs. The twin would only have been skipped as a
// duplicate after taking the lock. The fix remembers which mutexes are
// already held in a locked map[*sync.Mutex]struct{} and skips records whose
// mutex is in it.
package main

import (
	"context"
	"fmt"
	"sync"
)

type cacheRecord struct {
	mu      *sync.Mutex
	id      string
	mutable bool
	refs    map[*immutableRef]struct{}
	cm      *cacheManager
	dead    bool

	// these are filled if multiple refs point to same data
	equalMutable   *mutableRef
	equalImmutable *immutableRef
}

type immutableRef struct{ *cacheRecord }
type mutableRef struct{ *cacheRecord }

func (cr *cacheRecord) isDead() bool {
	return cr.dead || (cr.equalImmutable != nil && cr.equalImmutable.dead) || (cr.equalMutable != nil && cr.equalMutable.dead)
}

type cacheManager struct {
	mu      sync.Mutex
	records map[string]*cacheRecord
}

func (cm *cacheManager) New(id string) *mutableRef {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	rec := &cacheRecord{mu: &sync.Mutex{}, id: id, mutable: true, cm: cm, refs: map[*immutableRef]struct{}{}}
	cm.records[id] = rec
	return &mutableRef{rec}
}

func (sr *mutableRef) commit(ctx context.Context) *immutableRef {
	id := sr.id + "-committed"
	rec := &cacheRecord{
		mu:           sr.mu,
		id:           id,
		cm:           sr.cm,
		equalMutable: sr,
		refs:         make(map[*immutableRef]struct{}),
	}
	sr.cm.records[id] = rec
	ref := &immutableRef{rec}
	sr.equalImmutable = ref
	return ref
}

// Commit is what an exec op calls when its rootfs is done.
func (sr *mutableRef) Commit(ctx context.Context) *immutableRef {
	sr.cm.mu.Lock()
	defer sr.cm.mu.Unlock()
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return sr.commit(ctx)
}

type pruneOpt struct {
	all bool
}

func (cm *cacheManager) Prune(ctx context.Context, ch chan string, all bool) error {
	return cm.prune(ctx, ch, pruneOpt{all: all})
}

func (cm *cacheManager) prune(ctx context.Context, ch chan string, opt pruneOpt) error {
	var toDelete []*cacheRecord

	cm.mu.Lock()

	locked := map[*sync.Mutex]struct{}{}

	for _, cr := range cm.records {
		if _, ok := locked[cr.mu]; ok {
			continue
		}
		cr.mu.Lock()

		// ignore duplicates that share data
		if cr.equalImmutable != nil && len(cr.equalImmutable.refs) > 0 || cr.equalMutable != nil && len(cr.refs) == 0 {
			cr.mu.Unlock()
			continue
		}

		if cr.isDead() {
			cr.mu.Unlock()
			continue
		}

		if len(cr.refs) == 0 && opt.all {
			cr.dead = true
			toDelete = append(toDelete, cr)
			locked[cr.mu] = struct{}{}
			continue // leave the record locked
		}
		cr.mu.Unlock()
	}

	for _, cr := range toDelete {
		delete(cm.records, cr.id)
		if cr.equalImmutable != nil {
			delete(cm.records, cr.equalImmutable.id)
		}
		if ch != nil {
			ch <- cr.id
		}
		cr.mu.Unlock()
	}
	cm.mu.Unlock()
	return nil
}

func main() {
	ctx := context.Background()
	cm := &cacheManager{records: map[string]*cacheRecord{}}

	// Every RUN step leaves a committed snapshot and its released mutable
	// twin behind in the cache.
	for i := 0; i < 64; i++ {
		m := cm.New(fmt.Sprintf("step%02d", i))
		m.Commit(ctx)
	}

	ch := make(chan string, 256)
	if err := cm.Prune(ctx, ch, true); err != nil {
		fmt.Println("prune:", err)
	}
	close(ch)
	n := 0
	for range ch {
		n++
	}
	fmt.Println("pruned", n, "records, left", len(cm.records))
}
