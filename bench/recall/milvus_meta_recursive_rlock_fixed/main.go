// Project: milvus-io/milvus (internal/datacoord/meta.go, internal/datacoord/handler.go)
// Bug: datacoord's meta.SelectSegments holds m.RLock() while it runs a caller-supplied
// selector. The handler's selector called m.IsParentDropped(), which takes m.RLock()
// again. When DropPartition (m.Lock()) queues between the two read locks, the nested
// RLock waits for the writer and the writer waits for the outer RLock (issue #19339).
// Upstream fix: PR #19340 "Fix deadlock" (IsParentDropped acquired the meta read lock
// recursively); the parent-dropped check no longer re-acquires m's lock from inside an
// already-locked scan. Here the check is moved out of the selector. Caller and helper
// names besides IsParentDropped are approximations of the real code.
package main

import (
	"fmt"
	"sync"
	"time"
)

type SegmentInfo struct {
	ID            int64
	CollectionID  int64
	PartitionID   int64
	InsertChannel string
	NumRows       int64
}

type collectionInfo struct {
	ID         int64
	Partitions map[int64]bool // partitionID -> alive
}

type SegmentInfoSelector func(*SegmentInfo) bool

type meta struct {
	sync.RWMutex
	collections map[int64]*collectionInfo
	segments    map[int64]*SegmentInfo
}

// SelectSegments returns the segments accepted by selector.
func (m *meta) SelectSegments(selector SegmentInfoSelector) []*SegmentInfo {
	m.RLock()
	defer m.RUnlock()
	var ret []*SegmentInfo
	for _, info := range m.segments {
		if selector(info) {
			ret = append(ret, info)
		}
	}
	return ret
}

// IsParentDropped reports whether the segment's collection or partition is gone.
func (m *meta) IsParentDropped(collectionID, partitionID int64) bool {
	m.RLock()
	defer m.RUnlock()
	coll, ok := m.collections[collectionID]
	if !ok {
		return true
	}
	return !coll.Partitions[partitionID]
}

// DropPartition marks a partition dropped (write side).
func (m *meta) DropPartition(collectionID, partitionID int64) {
	m.Lock()
	defer m.Unlock()
	if coll, ok := m.collections[collectionID]; ok {
		coll.Partitions[partitionID] = false
	}
}

type ServerHandler struct{ meta *meta }

// GetVChanPositions collects live segments of a virtual channel for recovery.
func (h *ServerHandler) GetVChanPositions(channel string, collectionID int64) []int64 {
	segments := h.meta.SelectSegments(func(s *SegmentInfo) bool {
		time.Sleep(time.Millisecond) // per-segment work widens the window
		return s.InsertChannel == channel && s.CollectionID == collectionID
	})
	ids := make([]int64, 0, len(segments))
	for _, s := range segments {
		// Checked after SelectSegments released m's read lock.
		if h.meta.IsParentDropped(s.CollectionID, s.PartitionID) {
			continue
		}
		ids = append(ids, s.ID)
	}
	return ids
}

func main() {
	m := &meta{
		collections: map[int64]*collectionInfo{1: {ID: 1, Partitions: map[int64]bool{10: true, 11: true}}},
		segments:    map[int64]*SegmentInfo{},
	}
	for i := int64(0); i < 20; i++ {
		m.segments[i] = &SegmentInfo{ID: i, CollectionID: 1, PartitionID: 10 + i%2, InsertChannel: "by-dev-dml_0"}
	}
	h := &ServerHandler{meta: m}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 5; i++ {
			fmt.Println("recovered segments:", len(h.GetVChanPositions("by-dev-dml_0", 1)))
		}
	}()
	go func() {
		defer wg.Done()
		time.Sleep(3 * time.Millisecond)
		m.DropPartition(1, 11) // writer queues while the scan holds RLock
	}()
	wg.Wait()
}
