// Project: milvus-io/milvus (internal/querynodev2/segments/manager.go, segment.go), v2.3.0, August 2023 (issue #26428, fixed by PR #26435 "fix dead lock in concurrent search/release segment"; the exact search-side call path is approximate).
// Bug: segmentManager.Remove holds the manager write lock while remove() calls LocalSegment.Release, which takes the segment's ptrLock for writing and so waits for every search that pinned the segment. A search pins segments with GetAndPin (ptrLock read lock per segment) and unpins them through segmentManager.Unpin, which read-locks the manager first, so a release that arrives during a search waits for the search's pin while the search waits for the manager lock. The fix deletes the segment from the map under the lock and releases it after unlocking.
package b102milvusreleasesearch

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type SegmentType int

const (
	SegmentTypeGrowing SegmentType = iota
	SegmentTypeSealed
)

type DataScope int

const (
	DataScopeAll DataScope = iota
	DataScopeStreaming
	DataScopeHistorical
)

var errSegmentNotLoaded = errors.New("segment not loaded")

type Segment interface {
	ID() int64
	Type() SegmentType
	RLock() error
	RUnlock()
	Release()
}

type cSegment struct{ rows int64 }

type LocalSegment struct {
	ptrLock   sync.RWMutex // protects ptr
	ptr       *cSegment
	segmentID int64
	typ       SegmentType
}

func (s *LocalSegment) ID() int64         { return s.segmentID }
func (s *LocalSegment) Type() SegmentType { return s.typ }

func (s *LocalSegment) RLock() error {
	s.ptrLock.RLock()
	if s.ptr == nil {
		s.ptrLock.RUnlock()
		return errSegmentNotLoaded
	}
	return nil
}

func (s *LocalSegment) RUnlock() { s.ptrLock.RUnlock() }

func (s *LocalSegment) Release() {
	s.ptrLock.Lock()
	defer s.ptrLock.Unlock()
	s.ptr = nil // DeleteSegment in segcore
}

type segmentManager struct {
	mu              sync.RWMutex // guards all
	growingSegments map[int64]Segment
	sealedSegments  map[int64]Segment
}

func (mgr *segmentManager) Put(segType SegmentType, segments ...Segment) {
	mgr.mu.Lock()
	defer mgr.mu.Unlock()
	for _, s := range segments {
		if segType == SegmentTypeGrowing {
			mgr.growingSegments[s.ID()] = s
		} else {
			mgr.sealedSegments[s.ID()] = s
		}
	}
}

func (mgr *segmentManager) GetAndPin(segments []int64) ([]Segment, error) {
	mgr.mu.RLock()
	defer mgr.mu.RUnlock()
	pinned := make([]Segment, 0, len(segments))
	for _, id := range segments {
		s, ok := mgr.growingSegments[id]
		if !ok {
			s, ok = mgr.sealedSegments[id]
		}
		if !ok {
			continue
		}
		if err := s.RLock(); err != nil {
			for _, p := range pinned {
				p.RUnlock()
			}
			return nil, err
		}
		pinned = append(pinned, s)
	}
	return pinned, nil
}

func (mgr *segmentManager) Unpin(segments []Segment) {
	mgr.mu.RLock()
	defer mgr.mu.RUnlock()
	for _, s := range segments {
		s.RUnlock()
	}
}

func (mgr *segmentManager) Remove(segmentID int64, scope DataScope) (int, int) {
	mgr.mu.Lock()
	defer mgr.mu.Unlock()
	var removeGrowing, removeSealed int
	switch scope {
	case DataScopeStreaming:
		if remove(segmentID, mgr.growingSegments) {
			removeGrowing = 1
		}
	case DataScopeHistorical:
		if remove(segmentID, mgr.sealedSegments) {
			removeSealed = 1
		}
	}
	return removeGrowing, removeSealed
}

func remove(segmentID int64, container map[int64]Segment) bool {
	segment, ok := container[segmentID]
	if !ok {
		return false
	}
	delete(container, segmentID)
	segment.Release()
	return true
}

// searchHistorical mirrors the worker side of a search: pin, search, unpin.
func searchHistorical(mgr *segmentManager, segIDs []int64, search func([]Segment)) error {
	segments, err := mgr.GetAndPin(segIDs)
	if err != nil {
		return err
	}
	defer mgr.Unpin(segments)
	search(segments)
	return nil
}

func TestB102milvusreleasesearch(t *testing.T) {
	mgr := &segmentManager{growingSegments: map[int64]Segment{}, sealedSegments: map[int64]Segment{}}
	seg := &LocalSegment{ptr: &cSegment{rows: 2048}, segmentID: 100, typ: SegmentTypeSealed}
	mgr.Put(SegmentTypeSealed, seg)

	done := make(chan struct{}, 2)
	release := func() { // ReleaseSegments from querycoord
		mgr.Remove(100, DataScopeHistorical)
		done <- struct{}{}
	}
	go func() {
		err := searchHistorical(mgr, []int64{100}, func([]Segment) {
			go release()
			time.Sleep(100 * time.Millisecond) // segcore search on the pinned segment
		})
		if err != nil {
			t.Error(err)
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}
