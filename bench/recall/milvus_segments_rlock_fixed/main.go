// Project: milvus-io/milvus (internal/datacoord/meta.go)
// Bug: meta.GetSegmentsOfCollection held m.RLock() and, for each segment,
//
//	called the exported m.GetCollection(), which RLocks m.RWMutex again on
//	the same goroutine. When a writer (AddSegment from the segment
//	allocator flush path) queues on m.Lock() between the two RLocks, the
//	nested RLock blocks behind the writer and the writer waits for the
//	outer RLock: datacoord hangs.
//
// Fix: use the lock-free internal helper getCollectionLocked() while the read
//
//	lock is already held.
package main

import (
	"fmt"
	"sync"
	"time"
)

type UniqueID = int64

type SegmentState int32

const (
	SegmentStateGrowing SegmentState = iota + 1
	SegmentStateSealed
	SegmentStateFlushed
	SegmentStateDropped
)

type collectionInfo struct {
	ID         UniqueID
	Name       string
	Partitions []UniqueID
	Properties map[string]string
}

type SegmentInfo struct {
	ID           UniqueID
	CollectionID UniqueID
	PartitionID  UniqueID
	State        SegmentState
	NumOfRows    int64
	LastExpire   time.Time
}

type meta struct {
	sync.RWMutex
	segments    map[UniqueID]*SegmentInfo
	collections map[UniqueID]*collectionInfo
	chunkBytes  map[UniqueID]int64
}

// GetCollection returns the collection info, or nil.
func (m *meta) GetCollection(collectionID UniqueID) *collectionInfo {
	m.RLock()
	defer m.RUnlock()
	return m.getCollectionLocked(collectionID)
}

func (m *meta) getCollectionLocked(collectionID UniqueID) *collectionInfo {
	return m.collections[collectionID]
}

func isSegmentHealthy(s *SegmentInfo) bool {
	return s != nil && s.State != SegmentStateDropped
}

// GetSegmentsOfCollection returns all healthy segments of the collection
// whose partitions are still present.
func (m *meta) GetSegmentsOfCollection(collectionID UniqueID) []*SegmentInfo {
	m.RLock()
	defer m.RUnlock()
	var ret []*SegmentInfo
	for _, s := range m.segments {
		if !isSegmentHealthy(s) || s.CollectionID != collectionID {
			continue
		}
		time.Sleep(30 * time.Millisecond)             // per-segment binlog size accounting
		coll := m.getCollectionLocked(s.CollectionID) // FIX: read lock already held
		if coll == nil || !containsPartition(coll, s.PartitionID) {
			continue
		}
		ret = append(ret, s)
	}
	return ret
}

func containsPartition(c *collectionInfo, pid UniqueID) bool {
	for _, p := range c.Partitions {
		if p == pid {
			return true
		}
	}
	return false
}

// AddSegment records a new segment into the meta.
func (m *meta) AddSegment(segment *SegmentInfo) error {
	m.Lock()
	defer m.Unlock()
	if _, ok := m.segments[segment.ID]; ok {
		return fmt.Errorf("segment %d already exists", segment.ID)
	}
	m.segments[segment.ID] = segment
	m.chunkBytes[segment.ID] = 0
	return nil
}

func main() {
	m := &meta{
		segments:    map[UniqueID]*SegmentInfo{},
		collections: map[UniqueID]*collectionInfo{100: {ID: 100, Name: "book", Partitions: []UniqueID{1001}}},
		chunkBytes:  map[UniqueID]int64{},
	}
	_ = m.AddSegment(&SegmentInfo{ID: 1, CollectionID: 100, PartitionID: 1001, State: SegmentStateFlushed, NumOfRows: 4096})
	_ = m.AddSegment(&SegmentInfo{ID: 2, CollectionID: 100, PartitionID: 1001, State: SegmentStateGrowing, NumOfRows: 120})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // compaction trigger
		defer wg.Done()
		segs := m.GetSegmentsOfCollection(100)
		fmt.Println("segments for compaction:", len(segs))
	}()
	go func() { // segment allocator: new growing segment for an insert
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		_ = m.AddSegment(&SegmentInfo{ID: 3, CollectionID: 100, PartitionID: 1001,
			State: SegmentStateGrowing, LastExpire: time.Now().Add(time.Minute)})
	}()
	wg.Wait()
}
