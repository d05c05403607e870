// Project: nomad (client/allocrunner/alloc_runner.go, health_hook.go)
// Bug: allocRunner.Update held ar.stateLock while running the RunnerUpdate
// hooks; allocHealthWatcherHook.Update takes h.hookLock. The hook's watcher
// goroutine holds h.hookLock while reporting through the healthSetter
// interface (the allocRunner), whose SetHealth takes ar.stateLock: AB-BA.
package main

import (
	"sync"
	"time"
)

type Allocation struct {
	ID          string
	DeployState string
}

type RunnerUpdateRequest struct{ Alloc *Allocation }

type RunnerUpdateHook interface {
	Update(req *RunnerUpdateRequest) error
}

type healthSetter interface {
	SetHealth(healthy bool, deploymentID string)
}

type allocHealthWatcherHook struct {
	hookLock     sync.Mutex
	alloc        *Allocation
	healthSetter healthSetter
	watchDone    chan struct{}
}

func newAllocHealthWatcherHook(alloc *Allocation, hs healthSetter) *allocHealthWatcherHook {
	h := &allocHealthWatcherHook{alloc: alloc, healthSetter: hs, watchDone: make(chan struct{})}
	go h.watchHealth()
	return h
}

func (h *allocHealthWatcherHook) Update(req *RunnerUpdateRequest) error {
	h.hookLock.Lock()
	defer h.hookLock.Unlock()
	h.alloc = req.Alloc
	return nil
}

func (h *allocHealthWatcherHook) watchHealth() {
	for i := 0; i < 100; i++ {
		h.hookLock.Lock()
		h.healthSetter.SetHealth(true, h.alloc.ID)
		h.hookLock.Unlock()
	}
	close(h.watchDone)
}

type allocRunner struct {
	stateLock   sync.RWMutex
	alloc       *Allocation
	runnerHooks []interface{}
}

func NewAllocRunner(alloc *Allocation) *allocRunner {
	ar := &allocRunner{alloc: alloc}
	ar.runnerHooks = []interface{}{newAllocHealthWatcherHook(alloc, ar)}
	return ar
}

// SetHealth implements healthSetter.
func (ar *allocRunner) SetHealth(healthy bool, deploymentID string) {
	ar.stateLock.Lock()
	defer ar.stateLock.Unlock()
	if healthy {
		ar.alloc.DeployState = "healthy:" + deploymentID
	}
}

func (ar *allocRunner) update(update *Allocation) {
	ar.stateLock.Lock()
	defer ar.stateLock.Unlock()
	ar.alloc = update
	ar.updateHooks(update)
}

func (ar *allocRunner) updateHooks(update *Allocation) {
	req := &RunnerUpdateRequest{Alloc: update}
	for _, hook := range ar.runnerHooks {
		if h, ok := hook.(RunnerUpdateHook); ok {
			h.Update(req)
		}
	}
}

func main() {
	ar := NewAllocRunner(&Allocation{ID: "a1"})
	go func() {
		for i := 0; i < 100; i++ {
			ar.update(&Allocation{ID: "a1"})
		}
	}()
	time.Sleep(time.Second)
}
