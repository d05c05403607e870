// Project: uber/cadence (service/history/shard/context.go)
// Bug: (reconstruction) contextImpl.String() read the current range under
//      s.RLock() to print "Shard(id, range)". renewRangeLocked -- reached with the
//      shard write lock held via GenerateTransferTaskID -> generateTransferTaskIDLocked
//      -> updateRangeIfNeededLocked -- logged the shard with %v when UpdateShard
//      failed; fmt invoked String(), which RLocked the write-locked shard context.
// Fix: String() prints only the shard ID and takes no lock ("constant from
//      initialization, no need for locks").

package cadenceshard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const RangeSizeBits = 20

type ShardInfo struct {
	ShardID          int
	Owner            string
	RangeID          int64
	StolenSinceRenew int
	UpdatedAt        time.Time
	TransferAckLevel int64
}

type UpdateShardRequest struct {
	ShardInfo       *ShardInfo
	PreviousRangeID int64
}

type ShardOwnershipLostError struct {
	ShardID int
	Msg     string
}

func (e *ShardOwnershipLostError) Error() string {
	return fmt.Sprintf("shard %d ownership lost: %s", e.ShardID, e.Msg)
}

type ShardManager interface {
	UpdateShard(ctx context.Context, request *UpdateShardRequest) error
}

type contextImpl struct {
	shardID       int
	shardManager  ShardManager
	logger        *log.Logger
	closeCallback func(int)
	closed        int32

	sync.RWMutex
	lastUpdated               time.Time
	shardInfo                 *ShardInfo
	transferSequenceNumber    int64
	maxTransferSequenceNumber int64
	transferMaxReadLevel      int64
}

func (s *contextImpl) String() string {
	s.RLock()
	defer s.RUnlock()
	return fmt.Sprintf("Shard(%d, range %d)", s.shardID, s.shardInfo.RangeID)
}

func (s *contextImpl) GetShardID() int { return s.shardID }

func (s *contextImpl) GetTransferMaxReadLevel() int64 {
	s.RLock()
	defer s.RUnlock()
	return s.transferMaxReadLevel
}

func (s *contextImpl) GenerateTransferTaskID() (int64, error) {
	s.Lock()
	defer s.Unlock()
	return s.generateTransferTaskIDLocked()
}

func (s *contextImpl) generateTransferTaskIDLocked() (int64, error) {
	if err := s.updateRangeIfNeededLocked(); err != nil {
		return -1, err
	}
	taskID := s.transferSequenceNumber
	s.transferSequenceNumber++
	return taskID, nil
}

func (s *contextImpl) updateRangeIfNeededLocked() error {
	if s.transferSequenceNumber < s.maxTransferSequenceNumber {
		return nil
	}
	return s.renewRangeLocked(false)
}

func (s *contextImpl) renewRangeLocked(isStealing bool) error {
	updatedShardInfo := *s.shardInfo
	updatedShardInfo.RangeID++
	if isStealing {
		updatedShardInfo.StolenSinceRenew++
	}
	err := s.shardManager.UpdateShard(context.Background(), &UpdateShardRequest{
		ShardInfo: &updatedShardInfo, PreviousRangeID: s.shardInfo.RangeID})
	if err != nil {
		s.logger.Printf("%v: persistent store operation failure, RangeID %d: %v", s, updatedShardInfo.RangeID, err)
		var lost *ShardOwnershipLostError
		if errors.As(err, &lost) {
			s.closeShard()
		}
		return err
	}
	s.transferSequenceNumber = updatedShardInfo.RangeID << RangeSizeBits
	s.maxTransferSequenceNumber = (updatedShardInfo.RangeID + 1) << RangeSizeBits
	s.transferMaxReadLevel = s.transferSequenceNumber - 1
	s.shardInfo = &updatedShardInfo
	s.lastUpdated = time.Now()
	return nil
}

func (s *contextImpl) closeShard() {
	if !atomic.CompareAndSwapInt32(&s.closed, 0, 1) {
		return
	}
	go s.closeCallback(s.shardID)
}

// conditionFailingShardManager simulates another host having stolen the shard.
type conditionFailingShardManager struct{ owner string }

func (m *conditionFailingShardManager) UpdateShard(_ context.Context, req *UpdateShardRequest) error {
	return &ShardOwnershipLostError{ShardID: req.ShardInfo.ShardID,
		Msg: fmt.Sprintf("range %d already owned by %s", req.PreviousRangeID, m.owner)}
}

func TestRenewRangeOwnershipLost(t *testing.T) {
	var logs bytes.Buffer
	closedShards := make(chan int, 1)
	s := &contextImpl{
		shardID:       17,
		shardManager:  &conditionFailingShardManager{owner: "history-host-2"},
		logger:        log.New(&logs, "history ", log.LstdFlags),
		closeCallback: func(id int) { closedShards <- id },
		shardInfo:     &ShardInfo{ShardID: 17, Owner: "history-host-1", RangeID: 4},
	}
	s.transferSequenceNumber = 5 << RangeSizeBits // range exhausted
	s.maxTransferSequenceNumber = 5 << RangeSizeBits

	errc := make(chan error)
	go func() { // transfer task allocation from a workflow update
		_, err := s.GenerateTransferTaskID()
		errc <- err
	}()
	var lost *ShardOwnershipLostError
	if err := <-errc; !errors.As(err, &lost) {
		t.Fatalf("expected ShardOwnershipLostError, got %v", err)
	}
	if id := <-closedShards; id != 17 {
		t.Fatalf("closed shard %d", id)
	}
	t.Log(logs.String())
}
