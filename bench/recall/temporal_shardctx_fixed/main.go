// Project: temporal (service/history/shard/context_impl.go)
// Bug: task ID allocation took the shard write lock through the wLock() helper and released it by
// hand. When the range renewal failed (ShardOwnershipLostError from persistence) the error return
// skipped wUnlock(), leaking the lock; the next caller (the shard controller reading the range ID
// while unloading the shard) blocked forever in rLock(), wedging the history host.
// Upstream fix (applied here): use `defer s.wUnlock()` right after taking the lock; modelled, PR number not recalled.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type ShardOwnershipLostError struct {
	ShardID int32
	Msg     string
}

func (e *ShardOwnershipLostError) Error() string {
	return fmt.Sprintf("shard %d: %s", e.ShardID, e.Msg)
}

type ShardInfo struct {
	ShardID int32
	RangeID int64
	Owner   string
}

type ShardManager interface {
	UpdateShard(info *ShardInfo, previousRangeID int64) error
}

// persistence backed by cassandra; another host has stolen the shard.
type stolenShardManager struct{ currentRangeID int64 }

func (m *stolenShardManager) UpdateShard(info *ShardInfo, previousRangeID int64) error {
	if previousRangeID != m.currentRangeID {
		return &ShardOwnershipLostError{ShardID: info.ShardID, Msg: "range id mismatch"}
	}
	m.currentRangeID = info.RangeID
	return nil
}

const rangeSizeBits = 5

type ContextImpl struct {
	shardID      int32
	rwLock       sync.RWMutex
	shardInfo    *ShardInfo
	shardManager ShardManager
	taskSequence int64
	maxTaskID    int64
	state        string
}

func (s *ContextImpl) wLock()   { s.rwLock.Lock() }
func (s *ContextImpl) wUnlock() { s.rwLock.Unlock() }
func (s *ContextImpl) rLock()   { s.rwLock.RLock() }
func (s *ContextImpl) rUnlock() { s.rwLock.RUnlock() }

func (s *ContextImpl) renewRangeLocked(isStealing bool) error {
	updated := *s.shardInfo
	updated.RangeID++
	if err := s.shardManager.UpdateShard(&updated, s.shardInfo.RangeID); err != nil {
		var lost *ShardOwnershipLostError
		if errors.As(err, &lost) {
			s.state = "stopping"
		}
		return err
	}
	s.shardInfo = &updated
	s.taskSequence = updated.RangeID << rangeSizeBits
	s.maxTaskID = (updated.RangeID + 1) << rangeSizeBits
	return nil
}

func (s *ContextImpl) generateTaskIDLocked() (int64, error) {
	if s.taskSequence >= s.maxTaskID {
		if err := s.renewRangeLocked(false); err != nil {
			return -1, err
		}
	}
	id := s.taskSequence
	s.taskSequence++
	return id, nil
}

func (s *ContextImpl) GenerateTaskIDs(number int) ([]int64, error) {
	s.wLock()
	defer s.wUnlock()
	if s.state != "acquired" {
		return nil, errors.New("shard status unknown")
	}
	result := make([]int64, 0, number)
	for i := 0; i < number; i++ {
		id, err := s.generateTaskIDLocked()
		if err != nil {
			return nil, err
		}
		result = append(result, id)
	}
	return result, nil
}

func (s *ContextImpl) GetRangeID() int64 {
	s.rLock()
	defer s.rUnlock()
	return s.shardInfo.RangeID
}

func main() {
	info := &ShardInfo{ShardID: 7, RangeID: 10, Owner: "history-0"}
	shard := &ContextImpl{
		shardID:      7,
		shardInfo:    info,
		shardManager: &stolenShardManager{currentRangeID: 11},
		taskSequence: 10<<rangeSizeBits + 30,
		maxTaskID:    11 << rangeSizeBits,
		state:        "acquired",
	}

	// StartWorkflowExecution -> AddTasks -> allocate transfer/timer task IDs
	ids, err := shard.GenerateTaskIDs(4)
	fmt.Println("task ids:", ids, "err:", err)

	// shard controller: ownership lost, unload the shard
	fmt.Println("unloading shard with range id", shard.GetRangeID())
}
