// Project: influxdata/influxdb (tsdb/store.go, 1.x).
// Bug (approximate): Store.DeleteShard held s.mu.Lock() and, to drop series
// that no other shard references, called removeSeriesNotInOtherShards ->
// the public s.ShardsByDatabase(), which takes s.mu.RLock() on the same
// RWMutex: a self-deadlock through a method chain (and every query calling
// Store.Shard() then piles up behind it).
// Fix: call the lock-free filterShards() helper while s.mu is held.
package influxstoreshard

import (
	"sync"
	"testing"
	"time"
)

type Shard struct {
	id        uint64
	database  string
	mu        sync.RWMutex
	closed    bool
	seriesIDs map[uint64]struct{}
}

func (sh *Shard) ForEachSeriesID(fn func(id uint64)) {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	for id := range sh.seriesIDs {
		fn(id)
	}
}

func (sh *Shard) HasSeriesID(id uint64) bool {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	_, ok := sh.seriesIDs[id]
	return ok
}

func (sh *Shard) Close() error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.closed = true
	return nil
}

type SeriesFile struct {
	mu     sync.Mutex
	series map[uint64]string
}

func (f *SeriesFile) DeleteSeriesID(id uint64) {
	f.mu.Lock()
	delete(f.series, id)
	f.mu.Unlock()
}

type Store struct {
	mu     sync.RWMutex
	shards map[uint64]*Shard
	sfiles map[string]*SeriesFile
}

func byDatabase(db string) func(*Shard) bool {
	return func(sh *Shard) bool { return sh.database == db }
}

// filterShards returns shards matching fn. s.mu must be held.
func (s *Store) filterShards(fn func(*Shard) bool) []*Shard {
	var out []*Shard
	for _, sh := range s.shards {
		if fn(sh) {
			out = append(out, sh)
		}
	}
	return out
}

func (s *Store) ShardsByDatabase(db string) []*Shard {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.filterShards(byDatabase(db))
}

func (s *Store) Shard(id uint64) *Shard {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.shards[id]
}

func (s *Store) removeSeriesNotInOtherShards(sh *Shard) {
	sfile := s.sfiles[sh.database]
	others := s.ShardsByDatabase(sh.database) // BUG: RLock while s.mu is write-locked
	sh.ForEachSeriesID(func(id uint64) {
		for _, o := range others {
			if o != sh && o.HasSeriesID(id) {
				return
			}
		}
		sfile.DeleteSeriesID(id)
	})
}

// DeleteShard is called by the retention policy enforcement service.
func (s *Store) DeleteShard(shardID uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sh, ok := s.shards[shardID]
	if !ok {
		return nil
	}
	s.removeSeriesNotInOtherShards(sh)
	delete(s.shards, shardID)
	return sh.Close()
}

func TestRetentionDeleteShard(t *testing.T) {
	s := &Store{shards: map[uint64]*Shard{}, sfiles: map[string]*SeriesFile{}}
	s.sfiles["telegraf"] = &SeriesFile{series: map[uint64]string{1: "cpu,host=a", 2: "mem,host=a"}}
	s.shards[1] = &Shard{id: 1, database: "telegraf", seriesIDs: map[uint64]struct{}{1: {}, 2: {}}}
	s.shards[2] = &Shard{id: 2, database: "telegraf", seriesIDs: map[uint64]struct{}{1: {}}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := s.DeleteShard(1); err != nil {
			t.Errorf("delete shard: %v", err)
		}
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		if sh := s.Shard(2); sh == nil {
			t.Errorf("shard 2 missing")
		}
	}()
	wg.Wait()
}
