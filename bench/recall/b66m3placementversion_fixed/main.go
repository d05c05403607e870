// Shape of m3 cluster/placement: an active staged placement used by the aggregator.
package main

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

var errNoApplicablePlacement = errors.New("no applicable placement found")

type Placement struct {
	CutoverNanos int64
	Instances    []string
}

type Placements []Placement

// ActiveIndex finds the index of the last placement whose cutover is at or before timeNanos.
func (p Placements) ActiveIndex(timeNanos int64) int {
	idx := sort.Search(len(p), func(i int) bool { return p[i].CutoverNanos > timeNanos })
	return idx - 1
}

type DoneFn func()

type OnPlacementsRemovedFn func(placements []Placement)

type ActiveStagedPlacement interface {
	ActivePlacement() (Placement, DoneFn, error)
	Version() int
	Close() error
}

type activeStagedPlacement struct {
	sync.RWMutex

	placements            Placements
	version               int
	nowFn                 func() time.Time
	onPlacementsRemovedFn OnPlacementsRemovedFn

	expiring int32
	closed   bool
	doneFn   DoneFn
}

func newActiveStagedPlacement(placements Placements, version int, onRemoved OnPlacementsRemovedFn) *activeStagedPlacement {
	p := &activeStagedPlacement{
		placements:            placements,
		version:               version,
		nowFn:                 time.Now,
		onPlacementsRemovedFn: onRemoved,
	}
	p.doneFn = p.onPlacementDone
	return p
}

func (p *activeStagedPlacement) ActivePlacement() (Placement, DoneFn, error) {
	p.RLock()
	if p.closed {
		p.RUnlock()
		return Placement{}, nil, errors.New("active staged placement is closed")
	}
	idx := p.placements.ActiveIndex(p.nowFn().UnixNano())
	if idx < 0 {
		p.RUnlock()
		return Placement{}, nil, errNoApplicablePlacement
	}
	placement := p.placements[idx]
	// If the placement in effect is not the first one, expire the stale ones.
	if idx > 0 && atomic.CompareAndSwapInt32(&p.expiring, 0, 1) {
		go p.expire()
	}
	return placement, p.doneFn, nil
}

// Version is set once at construction, so it is read without the lock.
func (p *activeStagedPlacement) Version() int {
	return p.version
}

func (p *activeStagedPlacement) Close() error {
	p.Lock()
	defer p.Unlock()
	p.closed = true
	return nil
}

func (p *activeStagedPlacement) onPlacementDone() { p.RUnlock() }

func (p *activeStagedPlacement) expire() {
	defer atomic.StoreInt32(&p.expiring, 0)
	p.Lock()
	defer p.Unlock()
	idx := p.placements.ActiveIndex(p.nowFn().UnixNano())
	if idx <= 0 {
		return
	}
	if p.onPlacementsRemovedFn != nil {
		p.onPlacementsRemovedFn(p.placements[:idx])
	}
	p.placements = p.placements[idx:]
}

// placementManager is the aggregator-side user of the staged placement.
type placementManager struct {
	asp ActiveStagedPlacement
}

func (m *placementManager) InstancesForShard(shard int) ([]string, int, error) {
	placement, done, err := m.asp.ActivePlacement()
	if err != nil {
		return nil, 0, err
	}
	defer done()
	instances := placement.Instances
	time.Sleep(20 * time.Millisecond) // resolve the shard's owners in the placement
	return instances, m.asp.Version(), nil
}

func main() {
	now := time.Now().UnixNano()
	placements := Placements{
		{CutoverNanos: now - int64(time.Hour), Instances: []string{"agg-1", "agg-2"}},
		{CutoverNanos: now - int64(time.Minute), Instances: []string{"agg-1", "agg-3"}},
	}
	var wg sync.WaitGroup
	wg.Add(1)
	asp := newActiveStagedPlacement(placements, 7, func(removed []Placement) {
		defer wg.Done()
		fmt.Println("expired", len(removed), "stale placement(s)")
	})
	m := &placementManager{asp: asp}
	instances, version, err := m.InstancesForShard(3)
	fmt.Println("shard 3 ->", instances, "version", version, err)
	wg.Wait()
}
