// Reconstruction of a lock-order deadlock in the longhorn-engine sync agent,
// reported as longhorn/longhorn#779 ("engine: deadlock in snapshot purge
// result in Too many snapshots") and fixed by longhorn/longhorn-engine#420
// ("Fix deadlock in purge status").
//
// SyncAgentServer embeds a sync.Mutex that guards isPurging, and its
// PurgeStatus embeds a sync.RWMutex that guards the progress fields.
// PreparePurge takes the server mutex and then the PurgeStatus write lock to
// reset the progress. SnapshotPurgeStatus, polled by longhorn-manager, took the
// PurgeStatus read lock first and only then asked IsPurging, which takes the
// server mutex. When a recurring job starts a new purge while a status poll is
// in flight, the poller holds the read lock and waits for the server mutex,
// and PreparePurge holds the server mutex and waits for the write lock.
//
// The fixed twin reads IsPurging before taking the PurgeStatus read lock, as
// the upstream fix did, so the two locks are never nested in that order.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type ProcessState string

const (
	ProcessStateInProgress = ProcessState("in_progress")
	ProcessStateComplete   = ProcessState("complete")
	ProcessStateError      = ProcessState("error")
)

type PurgeStatus struct {
	sync.RWMutex
	Error     string
	Progress  int
	State     ProcessState
	processed int
	total     int
}

type SnapshotPurgeStatusResponse struct {
	IsPurging bool
	Error     string
	Progress  int32
	State     string
}

type snapshotInfo struct {
	Name        string
	UserCreated bool
	Removed     bool
}

type SyncAgentServer struct {
	sync.Mutex
	isPurging   bool
	snapshots   map[string]*snapshotInfo
	PurgeStatus *PurgeStatus
}

func NewSyncAgentServer() *SyncAgentServer {
	return &SyncAgentServer{
		snapshots: map[string]*snapshotInfo{
			"snap-1": {Name: "snap-1"},
			"snap-2": {Name: "snap-2", UserCreated: true},
			"snap-3": {Name: "snap-3"},
		},
		PurgeStatus: &PurgeStatus{},
	}
}

func (s *SyncAgentServer) SnapshotPurge(ctx context.Context) error {
	if err := s.PreparePurge(); err != nil {
		return err
	}
	go s.purgeSnapshots()
	return nil
}

func (s *SyncAgentServer) purgeSnapshots() {
	defer func() {
		s.PurgeStatus.Lock()
		s.PurgeStatus.State = ProcessStateComplete
		s.PurgeStatus.Unlock()
		if err := s.FinishPurge(); err != nil {
			fmt.Println("could not mark finish purge:", err)
		}
	}()
	var removed int
	for _, info := range s.snapshots {
		if info.UserCreated || info.Removed {
			continue
		}
		info.Removed = true
		removed++
		s.PurgeStatus.Lock()
		s.PurgeStatus.processed = removed
		s.PurgeStatus.Progress = removed * 100 / len(s.snapshots)
		s.PurgeStatus.Unlock()
	}
	s.PurgeStatus.Lock()
	s.PurgeStatus.Progress = 100
	s.PurgeStatus.Unlock()
}

func (s *SyncAgentServer) SnapshotPurgeStatus(ctx context.Context) (*SnapshotPurgeStatusResponse, error) {
	isPurging := s.IsPurging()

	s.PurgeStatus.RLock()
	defer s.PurgeStatus.RUnlock()
	resp := &SnapshotPurgeStatusResponse{
		Error:    s.PurgeStatus.Error,
		Progress: int32(s.PurgeStatus.Progress),
		State:    string(s.PurgeStatus.State),
	}
	time.Sleep(20 * time.Millisecond)
	resp.IsPurging = isPurging
	return resp, nil
}

func (s *SyncAgentServer) PreparePurge() error {
	s.Lock()
	defer s.Unlock()
	if s.isPurging {
		return fmt.Errorf("replica is already purging snapshots")
	}
	s.isPurging = true

	s.PurgeStatus.Lock()
	s.PurgeStatus.Error = ""
	s.PurgeStatus.Progress = 0
	s.PurgeStatus.State = ProcessStateInProgress
	s.PurgeStatus.total = 0
	s.PurgeStatus.processed = 0
	s.PurgeStatus.Unlock()
	return nil
}

func (s *SyncAgentServer) FinishPurge() error {
	s.Lock()
	defer s.Unlock()
	if !s.isPurging {
		return fmt.Errorf("BUG: replica is not purging snapshots")
	}
	s.isPurging = false
	return nil
}

func (s *SyncAgentServer) IsPurging() bool {
	s.Lock()
	defer s.Unlock()
	return s.isPurging
}

// waitForPurge is how longhorn-manager follows a purge: poll purge-status.
func waitForPurge(ctx context.Context, s *SyncAgentServer) *SnapshotPurgeStatusResponse {
	for {
		st, _ := s.SnapshotPurgeStatus(ctx)
		if !st.IsPurging {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func main() {
	ctx := context.Background()
	s := NewSyncAgentServer()

	if err := s.SnapshotPurge(ctx); err != nil {
		panic(err)
	}
	st := waitForPurge(ctx, s)
	fmt.Println("first purge:", st.State, st.Progress)

	// The recurring snapshot job asks for another purge while the manager
	// is still polling the status of the replica.
	go func() {
		time.Sleep(5 * time.Millisecond)
		if err := s.SnapshotPurge(ctx); err != nil {
			fmt.Println("second purge:", err)
		}
	}()
	st, _ = s.SnapshotPurgeStatus(ctx)
	fmt.Println("poll while second purge starts:", st.IsPurging)
	st = waitForPurge(ctx, s)
	fmt.Println("second purge:", st.State, st.Progress)
}
