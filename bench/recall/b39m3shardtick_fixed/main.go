// m3db/m3, src/dbnode/storage/shard.go (dbShard.tickAndExpire,
// dbShard.BlockStatesSnapshot, dbShard.insertSeriesBatch). Introduced by PR
// #2096, reported as m3db/m3#2127 "Rare goroutine deadlock in M3DB", fixed by
// PR #2128 "Remove nested read lock to prevent deadlock".
//
// tickAndExpire read-locks the shard (line 122) to copy the runtime options
// and, still holding that read lock, asks for BlockStatesSnapshot, the
// series.QueryableBlockRetriever method that read-locks the shard again
// (line 89) to look at the bootstrap state. If the insert queue's
// insertSeriesBatch has asked for the shard's write lock (line 150) between
// the two, the nested RLock waits behind the writer, and the writer waits for
// the tick's first read lock: every shard operation stops. The fix adds
// blockStatesSnapshotWithRLock, which tickAndExpire calls under its own read
// lock.
//
// FIXED TWIN: same program with the project's fix applied; the line numbers
// above refer to the unfixed probe in ../b39m3shardtick/main.go.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type BootstrapState int

const (
	BootstrapNotStarted BootstrapState = iota
	Bootstrapped
)

type fileOpStatus int

const (
	fileOpNotStarted fileOpStatus = iota
	fileOpSuccess
)

type fileOpState struct {
	WarmStatus             fileOpStatus
	ColdVersionRetrievable int
}

type BlockState struct {
	WarmRetrievable bool
	ColdVersion     int
}

type ShardBlockStateSnapshot struct {
	bootstrapped bool
	snapshot     map[int64]BlockState
}

// QueryableBlockRetriever is the part of the shard the series use while ticking.
type QueryableBlockRetriever interface {
	BlockStatesSnapshot() ShardBlockStateSnapshot
}

type runtimeOptions struct {
	tickSleepSeriesBatchSize int
	tickSleepPerSeries       time.Duration
}

type shardFlushState struct {
	sync.RWMutex
	statesByTime map[int64]fileOpState
}

type lookupEntry struct {
	id     string
	blocks int
}

type dbShardInsert struct{ id string }

type dbShard struct {
	sync.RWMutex
	shard              uint32
	bootstrapState     BootstrapState
	flushState         shardFlushState
	lookup             map[string]*lookupEntry
	ticking            bool
	currRuntimeOptions runtimeOptions
}

var errShardAlreadyTicking = errors.New("shard is already ticking")

// BlockStatesSnapshot implements series.QueryableBlockRetriever
func (s *dbShard) BlockStatesSnapshot() ShardBlockStateSnapshot {
	s.RLock()
	snapshots := s.blockStatesSnapshotWithRLock()
	s.RUnlock()
	return snapshots
}

func (s *dbShard) blockStatesSnapshotWithRLock() ShardBlockStateSnapshot {
	bootstrapped := s.bootstrapState == Bootstrapped
	if !bootstrapped {
		// Needs to be bootstrapped.
		return ShardBlockStateSnapshot{}
	}

	s.flushState.RLock()
	defer s.flushState.RUnlock()
	snapshot := make(map[int64]BlockState, len(s.flushState.statesByTime))
	for t, state := range s.flushState.statesByTime {
		snapshot[t] = BlockState{WarmRetrievable: state.WarmStatus == fileOpSuccess, ColdVersion: state.ColdVersionRetrievable}
	}
	return ShardBlockStateSnapshot{bootstrapped: true, snapshot: snapshot}
}

func (s *dbShard) tickAndExpire() (int, error) {
	s.Lock()
	// ensure only one tick can execute at a time
	if s.ticking {
		s.Unlock()
		return 0, errShardAlreadyTicking
	}
	s.ticking = true
	s.Unlock()
	defer func() {
		s.Lock()
		s.ticking = false
		s.Unlock()
	}()

	s.RLock()
	tickSleepBatch := s.currRuntimeOptions.tickSleepSeriesBatchSize
	tickSleepPerSeries := s.currRuntimeOptions.tickSleepPerSeries
	time.Sleep(50 * time.Millisecond) // probe: widen the window between the two read locks
	// Use blockStatesSnapshotWithRLock here to prevent nested read locks.
	blockStates := s.blockStatesSnapshotWithRLock()
	s.RUnlock()

	ticked := 0
	s.RLock()
	entries := make([]*lookupEntry, 0, len(s.lookup))
	for _, e := range s.lookup {
		entries = append(entries, e)
	}
	s.RUnlock()
	for i, e := range entries {
		if i > 0 && i%tickSleepBatch == 0 {
			time.Sleep(tickSleepPerSeries)
		}
		if blockStates.bootstrapped {
			e.blocks = len(blockStates.snapshot)
		}
		ticked++
	}
	return ticked, nil
}

// insertSeriesBatch is run by the shard's insert queue.
func (s *dbShard) insertSeriesBatch(inserts []dbShardInsert) error {
	s.Lock()
	defer s.Unlock()
	for _, ins := range inserts {
		if _, ok := s.lookup[ins.id]; !ok {
			s.lookup[ins.id] = &lookupEntry{id: ins.id}
		}
	}
	return nil
}

func main() {
	s := &dbShard{
		shard:              7,
		bootstrapState:     Bootstrapped,
		flushState:         shardFlushState{statesByTime: map[int64]fileOpState{0: {WarmStatus: fileOpSuccess}}},
		lookup:             map[string]*lookupEntry{"cpu{host=a}": {id: "cpu{host=a}"}},
		currRuntimeOptions: runtimeOptions{tickSleepSeriesBatchSize: 128, tickSleepPerSeries: time.Microsecond},
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		n, err := s.tickAndExpire()
		fmt.Println("ticked", n, err)
	}()
	time.Sleep(20 * time.Millisecond)
	go func() {
		defer wg.Done()
		fmt.Println("insert:", s.insertSeriesBatch([]dbShardInsert{{id: "cpu{host=b}"}}))
	}()
	wg.Wait()
}
