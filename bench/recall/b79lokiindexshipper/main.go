// Project: grafana/loki (pkg/storage/stores/indexshipper/downloads/table.go, index_set.go), v2.7 development, October 2022.
// Bug: table.ForEach looked up each index set through getOrCreateIndexSet, which took the table's indexSetsMtx.RLock and then the
// index set's read lock, and kept the index set read-locked until the end of the query. While the query still held the user index set,
// it went back for the common index set and needed indexSetsMtx.RLock again. Sync holds indexSetsMtx.RLock and waits for the write lock
// of the same user index set, and a query for a new tenant waits for indexSetsMtx.Lock, so the query's second RLock queues behind that
// writer and nobody can move (reported in PR #7490, fixed by PR #7497 which fetches all index sets of a query in one table-lock section).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Index interface{ Name() string }

type ForEachIndexCallback func(isMultiTenantIndex bool, idx Index) error

type boltIndex struct{ name string }

func (b *boltIndex) Name() string { return b.name }

// mtxWithReadiness is the index set mutex that also tracks whether the set finished downloading.
type mtxWithReadiness struct {
	mtx   sync.RWMutex
	ready chan struct{}
}

func newMtxWithReadiness() *mtxWithReadiness { return &mtxWithReadiness{ready: make(chan struct{})} }

func (m *mtxWithReadiness) markReady() { close(m.ready) }

func (m *mtxWithReadiness) awaitReady(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-m.ready:
		return nil
	}
}

func (m *mtxWithReadiness) lock(ctx context.Context) error {
	if err := m.awaitReady(ctx); err != nil {
		return err
	}
	m.mtx.Lock()
	return nil
}

func (m *mtxWithReadiness) unlock() { m.mtx.Unlock() }

func (m *mtxWithReadiness) rLock(ctx context.Context) error {
	if err := m.awaitReady(ctx); err != nil {
		return err
	}
	m.mtx.RLock()
	return nil
}

func (m *mtxWithReadiness) rUnlock() { m.mtx.RUnlock() }

type indexSet struct {
	tableName, userID string
	index             map[string]Index
	indexMtx          *mtxWithReadiness
}

func newIndexSet(tableName, userID string) *indexSet {
	is := &indexSet{tableName: tableName, userID: userID, index: map[string]Index{}, indexMtx: newMtxWithReadiness()}
	is.index[tableName+"-"+userID] = &boltIndex{name: tableName + "/" + userID}
	is.indexMtx.markReady()
	return is
}

// forEachLocked iterates the index files; the caller holds indexMtx for reading until the query ends.
func (s *indexSet) forEachLocked(callback ForEachIndexCallback) error {
	for _, idx := range s.index {
		if err := callback(s.userID == "", idx); err != nil {
			return err
		}
	}
	return nil
}

// Sync downloads updated files and swaps them in under the write lock.
func (s *indexSet) Sync(ctx context.Context) error {
	if err := s.indexMtx.lock(ctx); err != nil {
		return err
	}
	defer s.indexMtx.unlock()
	s.index[s.tableName+"-"+s.userID+"-synced"] = &boltIndex{name: "synced"}
	return nil
}

type table struct {
	name         string
	indexSets    map[string]*indexSet
	indexSetsMtx sync.RWMutex
}

// getOrCreateIndexSet returns the index set read-locked for the query, so that it cannot be dropped while in use.
func (t *table) getOrCreateIndexSet(ctx context.Context, id string) (*indexSet, func(), error) {
	t.indexSetsMtx.RLock()
	is, ok := t.indexSets[id]
	if ok {
		defer t.indexSetsMtx.RUnlock()
		if err := is.indexMtx.rLock(ctx); err != nil {
			return nil, nil, err
		}
		return is, is.indexMtx.rUnlock, nil
	}
	t.indexSetsMtx.RUnlock()

	t.indexSetsMtx.Lock()
	defer t.indexSetsMtx.Unlock()
	if is, ok = t.indexSets[id]; !ok {
		is = newIndexSet(t.name, id)
		t.indexSets[id] = is
	}
	if err := is.indexMtx.rLock(ctx); err != nil {
		return nil, nil, err
	}
	return is, is.indexMtx.rUnlock, nil
}

func (t *table) ForEach(ctx context.Context, userID string, callback ForEachIndexCallback) error {
	// iterate through both user and common index
	for _, uid := range []string{userID, ""} {
		is, release, err := t.getOrCreateIndexSet(ctx, uid)
		if err != nil {
			return err
		}
		defer release() // released when the query is done with the index
		if err := is.forEachLocked(callback); err != nil {
			return err
		}
	}
	return nil
}

// Sync downloads updated and new files for every index set of the table.
func (t *table) Sync(ctx context.Context) error {
	t.indexSetsMtx.RLock()
	defer t.indexSetsMtx.RUnlock()
	for userID, is := range t.indexSets {
		if err := is.Sync(ctx); err != nil {
			return fmt.Errorf("failed to sync index set %s for table %s: %w", userID, t.name, err)
		}
	}
	return nil
}

func main() {
	ctx := context.Background()
	t := &table{name: "index_19300", indexSets: map[string]*indexSet{}}
	t.indexSets["1"] = newIndexSet(t.name, "1")
	t.indexSets[""] = newIndexSet(t.name, "")

	inQuery := make(chan struct{})
	resume := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // querier for tenant 1
		defer wg.Done()
		first := true
		_ = t.ForEach(ctx, "1", func(_ bool, idx Index) error {
			if first {
				first = false
				close(inQuery)
				<-resume
			}
			return nil
		})
	}()
	<-inQuery
	go func() { defer wg.Done(); _ = t.Sync(ctx) }() // periodic table sync
	time.Sleep(100 * time.Millisecond)
	go func() { // querier for a tenant that has no index set yet
		defer wg.Done()
		_ = t.ForEach(ctx, "2", func(bool, Index) error { return nil })
	}()
	time.Sleep(100 * time.Millisecond)
	close(resume)
	wg.Wait()
	fmt.Println("queries and sync finished")
}
