// Project: m3db/m3 (src/dbnode/storage/block/lease.go leaseManager.UpdateOpenLeases and OpenLatestLease, src/dbnode/storage/namespace_readers.go namespaceReaderManager.put and UpdateOpenLease, src/dbnode/persist/fs/seek_manager.go), dbnode v0.10-v0.11 cold flush era, 2019 (fix PR approximate).
// Bug: leaseManager.UpdateOpenLeases held the lease manager mutex while it notified every registered Leaser, and namespaceReaderManager.UpdateOpenLease takes the reader manager mutex. namespaceReaderManager.put holds that same reader manager mutex while it asks leaseManager.OpenLatestLease for the latest volume, so a cold flush announcing a new volume and a peer streaming block metadata (FetchBlocksMetadataV2 returning its reader) deadlock AB-BA on the two mutexes. The fix releases the lease manager lock before calling the leasers and guards concurrent updates with updateOpenLeasesInProgress.
package b102m3updateopenleasesfixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type LeaseDescriptor struct {
	Namespace  string
	Shard      uint32
	BlockStart int64
}

type LeaseState struct{ Volume int }

type Leaser interface {
	UpdateOpenLease(descriptor LeaseDescriptor, state LeaseState) error
}

type LeaseVerifier interface {
	LatestState(descriptor LeaseDescriptor) (LeaseState, error)
}

var errConcurrentUpdateOpenLeases = errors.New("cannot call updateOpenLeases() concurrently")

type leaseManager struct {
	sync.Mutex
	updateOpenLeasesInProgress sync.Map
	leasers                    []Leaser
	verifier                   LeaseVerifier
}

func (m *leaseManager) RegisterLeaser(leaser Leaser) {
	m.Lock()
	defer m.Unlock()
	m.leasers = append(m.leasers, leaser)
}

func (m *leaseManager) OpenLatestLease(leaser Leaser, descriptor LeaseDescriptor) (LeaseState, error) {
	m.Lock() // so that UpdateOpenLeases can't run while verifying a lease

	defer m.Unlock()
	return m.verifier.LatestState(descriptor)
}

func (m *leaseManager) UpdateOpenLeases(descriptor LeaseDescriptor, state LeaseState) error {
	// NB(rartoul): Release lock while calling UpdateOpenLease().
	m.Lock()
	leasers := m.leasers
	m.Unlock()
	if _, ok := m.updateOpenLeasesInProgress.LoadOrStore(descriptor, struct{}{}); ok {
		return errConcurrentUpdateOpenLeases
	}
	defer m.updateOpenLeasesInProgress.Delete(descriptor)
	for _, l := range leasers {
		if err := l.UpdateOpenLease(descriptor, state); err != nil {
			return err
		}
	}
	return nil
}

// flushStates plays the database's FlushState retriever.
type flushStates struct {
	sync.RWMutex
	coldVersion map[LeaseDescriptor]int
}

func (f *flushStates) LatestState(d LeaseDescriptor) (LeaseState, error) {
	f.RLock()
	defer f.RUnlock()
	return LeaseState{Volume: f.coldVersion[d]}, nil
}

// seekerManager (persist/fs) hot-swaps its seekers to the new volume.
type seekerManager struct {
	sync.RWMutex
	newOpenSeekerFn func(shard uint32, blockStart int64, volume int) error
	active          map[LeaseDescriptor]int
}

func (m *seekerManager) UpdateOpenLease(d LeaseDescriptor, state LeaseState) error {
	if err := m.newOpenSeekerFn(d.Shard, d.BlockStart, state.Volume); err != nil {
		return err
	}
	m.Lock()
	m.active[d] = state.Volume // hot-swap, then wait for borrowed seekers
	m.Unlock()
	return nil
}

type reader struct {
	shard, volume int
	blockStart    int64
}

type namespaceReaderManager struct {
	sync.Mutex
	namespace         string
	blockLeaseManager *leaseManager
	openReaders       map[LeaseDescriptor]*reader
}

func (m *namespaceReaderManager) latestVolume(shard int, blockStart int64) (int, error) {
	state, err := m.blockLeaseManager.OpenLatestLease(m, LeaseDescriptor{m.namespace, uint32(shard), blockStart})
	return state.Volume, err
}

func (m *namespaceReaderManager) get(shard int, blockStart int64) (*reader, error) {
	volume, err := m.latestVolume(shard, blockStart)
	if err != nil {
		return nil, err
	}
	return &reader{shard: shard, blockStart: blockStart, volume: volume}, nil
}

func (m *namespaceReaderManager) put(r *reader) error {
	m.Lock()
	defer m.Unlock()
	latestVolume, err := m.latestVolume(r.shard, r.blockStart)
	if err != nil || latestVolume > r.volume {
		return err // a stale volume is closed and pooled instead
	}
	m.openReaders[LeaseDescriptor{m.namespace, uint32(r.shard), r.blockStart}] = r
	return nil
}

// UpdateOpenLease implements Leaser: drop cached readers of older volumes.
func (m *namespaceReaderManager) UpdateOpenLease(d LeaseDescriptor, state LeaseState) error {
	m.Lock()
	defer m.Unlock()
	if r, ok := m.openReaders[d]; ok && r.volume < state.Volume {
		delete(m.openReaders, d)
	}
	return nil
}

type dbShard struct {
	id                 uint32
	namespace          string
	namespaceReaderMgr *namespaceReaderManager
	blockLeaseManager  *leaseManager
	flushStates        *flushStates
}

func (s *dbShard) FetchBlocksMetadataV2(blockStart int64, send func(*reader)) error {
	r, err := s.namespaceReaderMgr.get(int(s.id), blockStart)
	if err != nil {
		return err
	}
	send(r)
	return s.namespaceReaderMgr.put(r)
}

// ColdFlush writes a new fileset volume and announces it to the leasers.
func (s *dbShard) ColdFlush(blockStart int64) error {
	d := LeaseDescriptor{s.namespace, s.id, blockStart}
	s.flushStates.Lock()
	nextVersion := s.flushStates.coldVersion[d] + 1
	s.flushStates.coldVersion[d] = nextVersion
	s.flushStates.Unlock()
	return s.blockLeaseManager.UpdateOpenLeases(d, LeaseState{Volume: nextVersion})
}

func TestB102m3updateopenleasesFixed(t *testing.T) {
	states := &flushStates{coldVersion: map[LeaseDescriptor]int{}}
	lm := &leaseManager{verifier: states}
	swapping := make(chan struct{})
	seekers := &seekerManager{active: map[LeaseDescriptor]int{}, newOpenSeekerFn: func(uint32, int64, int) error {
		close(swapping)
		time.Sleep(100 * time.Millisecond) // open the new volume's data and index files
		return nil
	}}
	lm.RegisterLeaser(seekers)
	readers := &namespaceReaderManager{namespace: "default", blockLeaseManager: lm, openReaders: map[LeaseDescriptor]*reader{}}
	lm.RegisterLeaser(readers)
	shard := &dbShard{id: 12, namespace: "default", namespaceReaderMgr: readers, blockLeaseManager: lm, flushStates: states}
	done := make(chan struct{}, 2)
	go func() { // peer bootstrap streaming metadata from this node
		err := shard.FetchBlocksMetadataV2(0, func(*reader) {
			go func() { // the cold flush announces the new volume
				if err := shard.ColdFlush(0); err != nil {
					t.Error(err)
				}
				done <- struct{}{}
			}()
			<-swapping
		})
		if err != nil {
			t.Error(err)
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}
