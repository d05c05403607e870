// Project: argoproj/argo-workflows (workflow/sync/sync_manager.go, semaphore.go)
// Bug: prioritySemaphore.release calls notifyWaiters, which invokes the controller's
// NextWorkflow callback while s.lock is held; the controller callback asks the
// sync Manager IsPending (cm.lock). A concurrent reconcile in Manager.TryAcquire
// holds cm.lock and then takes s.lock in addToQueue -> lock-order inversion.
// Fix: collect the keys to wake under s.lock and call nextWorkflow after unlocking.
package main

import (
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"time"
)

type NextWorkflow func(string)
type GetSyncLimit func(string) (int, error)

type item struct {
	key          string
	priority     int32
	creationTime time.Time
}

type semaphore interface {
	tryAcquire(holderKey string) (bool, string)
	release(key string) bool
	addToQueue(holderKey string, priority int32, creationTime time.Time)
	getName() string
	getLimit() int
}

type prioritySemaphore struct {
	name         string
	limit        int
	pending      []*item
	lockHolder   map[string]bool
	lock         *sync.Mutex
	nextWorkflow NextWorkflow
}

func newPrioritySemaphore(name string, limit int, next NextWorkflow) *prioritySemaphore {
	return &prioritySemaphore{name: name, limit: limit, lockHolder: map[string]bool{}, lock: &sync.Mutex{}, nextWorkflow: next}
}

func (s *prioritySemaphore) getName() string { return s.name }
func (s *prioritySemaphore) getLimit() int   { return s.limit }

func (s *prioritySemaphore) addToQueue(holderKey string, priority int32, creationTime time.Time) {
	s.lock.Lock()
	defer s.lock.Unlock()
	if s.lockHolder[holderKey] {
		return
	}
	for _, it := range s.pending {
		if it.key == holderKey {
			return
		}
	}
	s.pending = append(s.pending, &item{key: holderKey, priority: priority, creationTime: creationTime})
	sort.SliceStable(s.pending, func(i, j int) bool { return s.pending[i].priority > s.pending[j].priority })
}

func (s *prioritySemaphore) tryAcquire(holderKey string) (bool, string) {
	s.lock.Lock()
	defer s.lock.Unlock()
	if s.lockHolder[holderKey] {
		return true, ""
	}
	if len(s.lockHolder) >= s.limit || len(s.pending) == 0 || s.pending[0].key != holderKey {
		return false, fmt.Sprintf("Waiting for %s lock. Lock status: %d/%d", s.name, s.limit-len(s.lockHolder), s.limit)
	}
	s.pending = s.pending[1:]
	s.lockHolder[holderKey] = true
	return true, ""
}

func (s *prioritySemaphore) release(key string) bool {
	s.lock.Lock()
	defer s.lock.Unlock()
	if !s.lockHolder[key] {
		return false
	}
	delete(s.lockHolder, key)
	s.notifyWaiters()
	return true
}

func (s *prioritySemaphore) notifyWaiters() {
	free := s.limit - len(s.lockHolder)
	for i := 0; i < free && i < len(s.pending); i++ {
		log.Printf("Enqueue the workflow %s for semaphore %s", s.pending[i].key, s.name)
		s.nextWorkflow(s.pending[i].key)
	}
}

type Manager struct {
	syncLockMap  map[string]semaphore
	pending      map[string]string
	lock         *sync.Mutex
	nextWorkflow NextWorkflow
	getSyncLimit GetSyncLimit
}

func NewLockManager(getSyncLimit GetSyncLimit, nextWorkflow NextWorkflow) *Manager {
	return &Manager{syncLockMap: map[string]semaphore{}, pending: map[string]string{}, lock: &sync.Mutex{}, nextWorkflow: nextWorkflow, getSyncLimit: getSyncLimit}
}

func (cm *Manager) TryAcquire(wfKey, lockName string, priority int32) (bool, string, error) {
	cm.lock.Lock()
	defer cm.lock.Unlock()
	lock, ok := cm.syncLockMap[lockName]
	if !ok {
		limit, err := cm.getSyncLimit(lockName)
		if err != nil {
			return false, "", err
		}
		lock = newPrioritySemaphore(lockName, limit, cm.nextWorkflow)
		cm.syncLockMap[lockName] = lock
	}
	lock.addToQueue(wfKey, priority, time.Now())
	acquired, msg := lock.tryAcquire(wfKey)
	if acquired {
		delete(cm.pending, wfKey)
	} else {
		cm.pending[wfKey] = lockName
	}
	return acquired, msg, nil
}

func (cm *Manager) Release(wfKey, lockName string) {
	cm.lock.Lock()
	lock, ok := cm.syncLockMap[lockName]
	cm.lock.Unlock()
	if ok && lock.release(wfKey) {
		log.Printf("%s released a lock from %s", wfKey, lock.getName())
	}
}

func (cm *Manager) IsPending(wfKey string) bool {
	cm.lock.Lock()
	defer cm.lock.Unlock()
	_, ok := cm.pending[wfKey]
	return ok
}

type WorkflowController struct {
	syncManager *Manager
	wfQueue     chan string
	lookupDelay time.Duration
}

func (wfc *WorkflowController) requeueFromSemaphore(key string) {
	time.Sleep(wfc.lookupDelay)
	if wfc.syncManager.IsPending(key) {
		wfc.wfQueue <- key
	}
}

func main() {
	wfc := &WorkflowController{wfQueue: make(chan string, 10), lookupDelay: 50 * time.Millisecond}
	wfc.syncManager = NewLockManager(func(name string) (int, error) {
		if !strings.HasPrefix(name, "argo/ConfigMap/") {
			return 0, fmt.Errorf("invalid lock key %q", name)
		}
		return 1, nil
	}, wfc.requeueFromSemaphore)
	sem := "argo/ConfigMap/semaphore-config/workflow"
	for _, wf := range []string{"argo/wf-a", "argo/wf-b"} {
		ok, msg, err := wfc.syncManager.TryAcquire(wf, sem, 0)
		fmt.Println(wf, "acquired:", ok, msg, err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		wfc.syncManager.Release("argo/wf-a", sem)
	}()
	time.Sleep(10 * time.Millisecond)
	go func() {
		defer wg.Done()
		ok, _, _ := wfc.syncManager.TryAcquire("argo/wf-c", sem, 0)
		fmt.Println("argo/wf-c acquired:", ok)
	}()
	wg.Wait()
	fmt.Println("requeued:", len(wfc.wfQueue))
}
