// Package branchdefer: a lock taken on a branch with its unlock deferred
// stays held, on the paths that took it, until the function returns. A
// take after the branch merges is a re-lock there.
package branchdefer

import (
	"errors"
	"sync"
)

var errBatch = errors.New("invalid endpoint batch")

// Syncer is ingress-gce's transaction syncer: the degraded-mode branch
// records the error state under syncLock with a deferred unlock, and the
// commit that follows locks syncLock again.
type Syncer struct {
	syncLock   sync.Mutex
	degraded   bool
	errorState string
	pending    map[string]bool
}

func (s *Syncer) validate(err error) error {
	if err != nil {
		return errBatch
	}
	return nil
}

func (s *Syncer) commit(ep string) {
	s.syncLock.Lock()
	defer s.syncLock.Unlock()
	delete(s.pending, ep)
}

func (s *Syncer) operation(ep string, err error) {
	if err != nil && s.degraded {
		if batchErr := s.validate(err); batchErr != nil {
			s.syncLock.Lock()
			defer s.syncLock.Unlock()
			s.errorState = batchErr.Error()
		}
	}
	s.commit(ep) // want `Syncer.syncLock locked again by Syncer.commit \(at branchdefer.go:\d+\) while held since branchdefer.go:\d+ where that branch ran \(its unlock is deferred to the return\): self-deadlock \[double-lock\]`
}

// The fix: the error state is set in a closure that unlocks on return.
func (s *Syncer) operationFixed(ep string, err error) {
	if err != nil && s.degraded {
		if batchErr := s.validate(err); batchErr != nil {
			func() {
				s.syncLock.Lock()
				defer s.syncLock.Unlock()
				s.errorState = batchErr.Error()
			}()
		}
	}
	s.commit(ep)
}

// vsphere-csi's createVolume, with the fault path's cleanup on every
// path after the branch: the task is stored under the map lock with a
// deferred unlock on the branch that creates it, and the cleanup locks
// the map again.
var (
	tasksLock sync.Mutex
	tasks     = map[string]int{}
)

func create(name string, pending bool) int {
	task := 0
	if !pending {
		task = len(name)
		tasksLock.Lock()
		defer tasksLock.Unlock()
		tasks[name] = task
	}
	tasksLock.Lock() // want `tasksLock locked again while held since branchdefer.go:\d+ where that branch ran \(its unlock is deferred to the return\): self-deadlock \[double-lock\]`
	delete(tasks, name+".old")
	tasksLock.Unlock()
	return task
}

// Silent: a take on some paths after the branch only. Here its
// condition is the branch's own, told apart by a value the walk does
// not follow (incus' prefill: the caller that did not start the fill
// waits for it), so a take that does not follow on every path is left
// alone; vsphere-csi's real fault path, a take under its own branches,
// is missed with it.
var (
	fillMu      sync.RWMutex
	fillRunning bool
)

func prefill(name string) {
	var runFill bool
	if !fillRunning {
		fillRunning = true
		fillMu.Lock()
		defer fillMu.Unlock()
		runFill = true
	}
	if !runFill {
		fillMu.RLock()
		defer fillMu.RUnlock()
	}
	tasks[name] = 0
}

// Silent: the same flag decides both branches (the second runs only where
// the first did not), and a lock taken and released again before the
// branch merges is no hold at all.
func store(name string, locked bool) {
	if locked {
		tasksLock.Lock()
		defer tasksLock.Unlock()
	}
	tasks[name] = 1
	if !locked {
		tasksLock.Lock()
		tasks[name] = 2
		tasksLock.Unlock()
	}
}

func forget(name string, fault bool) {
	if fault {
		tasksLock.Lock()
		delete(tasks, name)
		tasksLock.Unlock()
	}
	tasksLock.Lock()
	defer tasksLock.Unlock()
	tasks[name] = 0
}
