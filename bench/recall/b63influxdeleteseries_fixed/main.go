// Fixed twin: PR #9334 applied (DeleteSeries snapshots the shards under the
// read lock and releases it before deleting).
// Shape of influxdata/influxdb PR #9334 ("Fix deadlock in DeleteSeries"),
// 1.5 development: Store.DeleteSeries holds s.mu.RLock while each shard's
// engine deletes; to decide whether a series is gone from the whole
// database the engine asks its SeriesIDSets (the shardSet the store handed
// it in the engine options), whose ForEach read-locks the same store mutex.
// A CreateShard queued on s.mu.Lock in between blocks that second RLock.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type SeriesIDSet struct {
	sync.RWMutex
	ids map[uint64]struct{}
}

func NewSeriesIDSet() *SeriesIDSet { return &SeriesIDSet{ids: map[uint64]struct{}{}} }

func (s *SeriesIDSet) Add(id uint64) { s.Lock(); s.ids[id] = struct{}{}; s.Unlock() }
func (s *SeriesIDSet) Remove(id uint64) {
	s.Lock()
	delete(s.ids, id)
	s.Unlock()
}
func (s *SeriesIDSet) Contains(id uint64) bool {
	s.RLock()
	defer s.RUnlock()
	_, ok := s.ids[id]
	return ok
}

// SeriesIDSets lets an engine look at the series of every shard of its
// database.
type SeriesIDSets interface {
	ForEach(f func(ids *SeriesIDSet)) error
}

type EngineOptions struct {
	SeriesIDSets SeriesIDSets
}

type Engine struct {
	mu      sync.RWMutex
	series  *SeriesIDSet
	opts    EngineOptions
	dropped []uint64
}

func (e *Engine) DeleteSeriesRange(ids []uint64) error {
	e.mu.Lock()
	for _, id := range ids {
		e.series.Remove(id)
	}
	e.mu.Unlock()
	time.Sleep(100 * time.Millisecond) // rewrite TSM tombstones

	// Is the series gone from every shard? Only then drop it from the
	// database-wide series file.
	inUse := map[uint64]bool{}
	e.opts.SeriesIDSets.ForEach(func(s *SeriesIDSet) {
		for _, id := range ids {
			if s.Contains(id) {
				inUse[id] = true
			}
		}
	})
	for _, id := range ids {
		if !inUse[id] {
			e.dropped = append(e.dropped, id)
		}
	}
	return nil
}

type Shard struct {
	id       uint64
	database string
	engine   *Engine
}

func (sh *Shard) SeriesIDSet() *SeriesIDSet { return sh.engine.series }

type Store struct {
	mu     sync.RWMutex
	shards map[uint64]*Shard
}

type shardSet struct {
	store *Store
	db    string
}

func (s shardSet) ForEach(f func(ids *SeriesIDSet)) error {
	s.store.mu.RLock()
	shards := s.store.filterShards(byDatabase(s.db))
	s.store.mu.RUnlock()
	for _, sh := range shards {
		f(sh.SeriesIDSet())
	}
	return nil
}

func byDatabase(db string) func(*Shard) bool {
	return func(sh *Shard) bool { return sh.database == db }
}

// filterShards must be called with s.mu held.
func (s *Store) filterShards(fn func(*Shard) bool) []*Shard {
	var out []*Shard
	for _, sh := range s.shards {
		if fn(sh) {
			out = append(out, sh)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func (s *Store) CreateShard(db string, id uint64, series ...uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	eng := &Engine{series: NewSeriesIDSet(), opts: EngineOptions{SeriesIDSets: shardSet{store: s, db: db}}}
	for _, sid := range series {
		eng.series.Add(sid)
	}
	s.shards[id] = &Shard{id: id, database: db, engine: eng}
	return nil
}

func (s *Store) DeleteSeries(database string, ids []uint64) error {
	// Take a snapshot of the shards; each shard handles its own
	// concurrency, so the store lock is not held while deleting.
	s.mu.RLock()
	shards := s.filterShards(byDatabase(database))
	s.mu.RUnlock()
	for _, sh := range shards {
		if err := sh.engine.DeleteSeriesRange(ids); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	store := &Store{shards: map[uint64]*Shard{}}
	store.CreateShard("telegraf", 1, 10, 11, 12)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // points writer: first point of a new shard group
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		store.CreateShard("telegraf", 2, 12)
		fmt.Println("shard 2 created")
	}()

	err := store.DeleteSeries("telegraf", []uint64{10, 11})
	fmt.Println("DROP SERIES done:", err)
	wg.Wait()
}
