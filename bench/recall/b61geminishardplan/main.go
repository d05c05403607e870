// Project: openGemini/openGemini (time-series database), v1.0 development, Jan 2023.
// Files/functions: engine/shard.go: shard.CreateLogicalPlan,
// shard.createLogicalPlan, shard.cloneReaders, shard.cloneMeasurementReaders,
// shard.Close; engine/engine.go: Engine.CreateLogicalPlan, Engine.DeleteShard;
// the retention-policy task that drops expired shards.
// Issue: openGemini/openGemini#95, fixed by openGemini/openGemini#96
// "fix: shard mu RLock and Lock conflict".
//
// A query builds its logical plan shard by shard. shard.CreateLogicalPlan
// read-locks s.mu for the whole planning (so the shard cannot be closed
// under the query) and, while building the per-measurement cursors, calls
// cloneMeasurementReaders to take references on the immutable TSSP files and
// the memtables; cloneMeasurementReaders read-locked s.mu again. When the
// retention-policy task expires the same shard in between, shard.Close asks
// for the write lock: it waits for the query's first read lock, and the
// query's second RLock now waits behind the pending writer. The query and
// the retention task block each other (and every later Lock/RLock of the
// shard behind them). The fix drops the inner RLock: cloneMeasurementReaders
// is only called with the shard lock already held.
package main

import (
	"fmt"
	"sync"
	"time"
)

type TSSPFile struct{ name string }

type MemTable struct{ rows int }

type ShardIdentifier struct {
	ShardID uint64
	Policy  string
}

type QuerySchema struct {
	Measurements []string
	Fields       []string
}

type LogicalPlan struct {
	Measurement string
	Files       []*TSSPFile
	Mem         *MemTable
}

type shard struct {
	mu        sync.RWMutex
	closed    bool
	ident     ShardIdentifier
	immTables map[string][]*TSSPFile
	activeTbl *MemTable
}

// CreateLogicalPlan is called for every shard a query touches.
func (s *shard) CreateLogicalPlan(schema *QuerySchema) ([]*LogicalPlan, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("shard %d closed", s.ident.ShardID)
	}
	return s.createLogicalPlan(schema)
}

func (s *shard) createLogicalPlan(schema *QuerySchema) ([]*LogicalPlan, error) {
	var plans []*LogicalPlan
	for _, mst := range schema.Measurements {
		// series index lookup and tag filtering for the measurement
		time.Sleep(30 * time.Millisecond)
		p, err := s.cloneReaders(mst)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

func (s *shard) cloneReaders(mst string) (*LogicalPlan, error) {
	files, mem := s.cloneMeasurementReaders(mst)
	if files == nil && mem == nil {
		return nil, fmt.Errorf("measurement %s not found", mst)
	}
	return &LogicalPlan{Measurement: mst, Files: files, Mem: mem}, nil
}

func (s *shard) cloneMeasurementReaders(mst string) ([]*TSSPFile, *MemTable) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	files := append([]*TSSPFile(nil), s.immTables[mst]...)
	return files, s.activeTbl
}

func (s *shard) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.immTables = nil
	s.activeTbl = nil
	return nil
}

type Engine struct {
	mu     sync.RWMutex
	shards map[uint64]*shard
}

func (e *Engine) getShard(id uint64) *shard {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.shards[id]
}

func (e *Engine) CreateLogicalPlan(shardID uint64, schema *QuerySchema) ([]*LogicalPlan, error) {
	sh := e.getShard(shardID)
	if sh == nil {
		return nil, fmt.Errorf("shard %d not found", shardID)
	}
	return sh.CreateLogicalPlan(schema)
}

func (e *Engine) DeleteShard(shardID uint64) error {
	e.mu.Lock()
	sh := e.shards[shardID]
	delete(e.shards, shardID)
	e.mu.Unlock()
	if sh == nil {
		return nil
	}
	return sh.Close()
}

// retentionPolicyEnforce drops the shards whose end time is past the
// retention policy duration.
func retentionPolicyEnforce(e *Engine, expired []uint64) {
	for _, id := range expired {
		if err := e.DeleteShard(id); err != nil {
			fmt.Println("delete shard:", err)
		}
	}
}

func main() {
	sh := &shard{
		ident:     ShardIdentifier{ShardID: 7, Policy: "autogen"},
		immTables: map[string][]*TSSPFile{"cpu": {{name: "00000001-0000-00000000.tssp"}}},
		activeTbl: &MemTable{rows: 128},
	}
	e := &Engine{shards: map[uint64]*shard{7: sh}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		plans, err := e.CreateLogicalPlan(7, &QuerySchema{Measurements: []string{"cpu"}, Fields: []string{"usage"}})
		fmt.Println("query planned:", len(plans), err)
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		retentionPolicyEnforce(e, []uint64{7})
		fmt.Println("expired shard 7 dropped")
	}()
	wg.Wait()
}
