// Project: milvus-io/milvus, master before 2.4.2 (May 2024), DataCoord.
// Files: internal/datacoord/meta.go (meta.GetNumRowsOfPartition,
// meta.SelectSegments, meta.AddSegment), internal/datacoord/segment_info.go
// (SegmentsInfo.GetSegmentsBySelector), internal/datacoord/segment_operator.go
// (SegmentFilter, WithCollection, SegmentFilterFunc), internal/datacoord/
// services.go (Server.GetPartitionStatistics), internal/datacoord/
// segment_manager.go (SegmentManager.openNewSegment).
// Issue: milvus-io/milvus#33044 "Deadlock may happens in datacoord
// GetNumRowsOfPartition for double rlock"; fixed by PR #33045 "fix: Remove
// RLock re-entry in GetNumRowsOfPartition".
//
// DataCoord's meta is guarded by one RWMutex. GetNumRowsOfPartition, which
// backs GetPartitionStatistics (num_entities of a partition), read-locks meta
// and then selects the partition's healthy segments through the exported
// SelectSegments with a collection filter and a SegmentFilterFunc closure;
// SelectSegments read-locks meta again. Segment allocation for inserts runs
// concurrently: SegmentManager.openNewSegment calls meta.AddSegment, which
// write-locks meta. If that writer queues between the two read locks, the
// nested RLock blocks behind it while the writer waits for the outer read
// lock, and DataCoord stops allocating segments and answering statistics. The
// fix reads the segments through the unlocked SegmentsInfo accessor while
// already holding the lock.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type UniqueID = int64

type SegmentState int

const (
	SegmentStateGrowing SegmentState = iota
	SegmentStateFlushed
	SegmentStateDropped
)

type SegmentInfo struct {
	ID           UniqueID
	CollectionID UniqueID
	PartitionID  UniqueID
	State        SegmentState
	NumOfRows    int64
}

func (s *SegmentInfo) GetPartitionID() UniqueID { return s.PartitionID }

func isSegmentHealthy(s *SegmentInfo) bool { return s != nil && s.State != SegmentStateDropped }

type segmentCriterion struct {
	collectionID UniqueID
	others       []SegmentFilter
}

type SegmentFilter interface {
	Match(segment *SegmentInfo) bool
	AddFilter(*segmentCriterion)
}

type CollectionFilter UniqueID

func (f CollectionFilter) Match(s *SegmentInfo) bool     { return s.CollectionID == UniqueID(f) }
func (f CollectionFilter) AddFilter(c *segmentCriterion) { c.collectionID = UniqueID(f) }

func WithCollection(collectionID UniqueID) SegmentFilter { return CollectionFilter(collectionID) }

type SegmentFilterFunc func(*SegmentInfo) bool

func (f SegmentFilterFunc) Match(s *SegmentInfo) bool     { return f(s) }
func (f SegmentFilterFunc) AddFilter(c *segmentCriterion) { c.others = append(c.others, f) }

type SegmentsInfo struct {
	segments      map[UniqueID]*SegmentInfo
	coll2Segments map[UniqueID]map[UniqueID]*SegmentInfo
}

func (s *SegmentsInfo) GetSegmentsBySelector(filters ...SegmentFilter) []*SegmentInfo {
	criterion := &segmentCriterion{}
	for _, f := range filters {
		f.AddFilter(criterion)
	}
	var result []*SegmentInfo
	for _, seg := range s.coll2Segments[criterion.collectionID] {
		ok := true
		for _, f := range criterion.others {
			ok = ok && f.Match(seg)
		}
		if ok {
			result = append(result, seg)
		}
	}
	return result
}

func (s *SegmentsInfo) SetSegment(id UniqueID, seg *SegmentInfo) {
	s.segments[id] = seg
	if s.coll2Segments[seg.CollectionID] == nil {
		s.coll2Segments[seg.CollectionID] = map[UniqueID]*SegmentInfo{}
	}
	s.coll2Segments[seg.CollectionID][id] = seg
}

type meta struct {
	sync.RWMutex
	segments *SegmentsInfo
}

// SelectSegments select segments with selector
func (m *meta) SelectSegments(filters ...SegmentFilter) []*SegmentInfo {
	m.RLock()
	defer m.RUnlock()
	return m.segments.GetSegmentsBySelector(filters...)
}

// GetNumRowsOfPartition returns row count of segments belongs to provided collection & partition
func (m *meta) GetNumRowsOfPartition(collectionID UniqueID, partitionID UniqueID) int64 {
	m.RLock()
	defer m.RUnlock()
	time.Sleep(50 * time.Millisecond) // meta is large; the allocator gets in here
	var ret int64
	segments := m.SelectSegments(WithCollection(collectionID), SegmentFilterFunc(func(si *SegmentInfo) bool {
		return si.GetPartitionID() == partitionID && isSegmentHealthy(si)
	}))
	for _, segment := range segments {
		ret += segment.NumOfRows
	}
	return ret
}

// AddSegment records segment info, persisting info into kv store
func (m *meta) AddSegment(_ context.Context, segment *SegmentInfo) error {
	m.Lock()
	defer m.Unlock()
	m.segments.SetSegment(segment.ID, segment)
	return nil
}

type SegmentManager struct {
	meta   *meta
	nextID UniqueID
}

func (s *SegmentManager) openNewSegment(ctx context.Context, collectionID, partitionID UniqueID) (*SegmentInfo, error) {
	s.nextID++
	seg := &SegmentInfo{ID: s.nextID, CollectionID: collectionID, PartitionID: partitionID, State: SegmentStateGrowing}
	if err := s.meta.AddSegment(ctx, seg); err != nil {
		return nil, err
	}
	return seg, nil
}

type Server struct{ meta *meta }

func (s *Server) GetPartitionStatistics(collectionID, partitionID UniqueID) map[string]string {
	nums := s.meta.GetNumRowsOfPartition(collectionID, partitionID)
	return map[string]string{"row_count": fmt.Sprint(nums)}
}

func main() {
	m := &meta{segments: &SegmentsInfo{segments: map[UniqueID]*SegmentInfo{}, coll2Segments: map[UniqueID]map[UniqueID]*SegmentInfo{}}}
	m.segments.SetSegment(1, &SegmentInfo{ID: 1, CollectionID: 100, PartitionID: 10, State: SegmentStateFlushed, NumOfRows: 3000})
	m.segments.SetSegment(2, &SegmentInfo{ID: 2, CollectionID: 100, PartitionID: 10, State: SegmentStateFlushed, NumOfRows: 1200})
	srv := &Server{meta: m}
	mgr := &SegmentManager{meta: m, nextID: 2}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // num_entities of the partition
		defer wg.Done()
		fmt.Println("partition stats:", srv.GetPartitionStatistics(100, 10))
	}()
	go func() { // an insert needs a new growing segment
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		seg, _ := mgr.openNewSegment(context.Background(), 100, 10)
		fmt.Println("opened segment", seg.ID)
	}()
	wg.Wait()
}
