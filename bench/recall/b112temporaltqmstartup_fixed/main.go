// Project: temporalio/temporal (service/matching/matchingEngine.go, service/matching/taskQueueManager.go, service/matching/taskWriter.go), v1.11.x, July 2021.
// Bug: matchingEngineImpl.getTaskQueueManager builds a missing taskQueueManager while it holds taskQueuesLock for writing, and the constructor acquires the task queue lease; when RenewLease fails with a ConditionFailedError (another matching host took the partition), signalIfFatal runs the stored signalFatalProblem upcall, which is e.unloadTaskQueue, and that write-locks taskQueuesLock again, so the request goroutine deadlocks on itself (temporary fix PR #1780, real fix PR #1785 "Matching deadlock fix" which suppresses the upcall during startup; code approximate).
package main

import (
	"errors"
	"fmt"
	"sync"
)

type ConditionFailedError struct{ Msg string }

func (e *ConditionFailedError) Error() string { return e.Msg }

type taskQueueID struct {
	namespaceID string
	name        string
	taskType    int
}

type taskQueueState struct {
	rangeID  int64
	ackLevel int64
}

// taskManager is the persistence interface (LeaseTaskQueue).
type taskManager interface {
	LeaseTaskQueue(id taskQueueID, rangeID int64) (int64, error)
}

type taskQueueDB struct {
	sync.Mutex
	id      taskQueueID
	rangeID int64
	store   taskManager
}

func (db *taskQueueDB) RenewLease() (taskQueueState, error) {
	db.Lock()
	defer db.Unlock()
	newRange, err := db.store.LeaseTaskQueue(db.id, db.rangeID)
	if err != nil {
		return taskQueueState{}, err
	}
	db.rangeID = newRange
	return taskQueueState{rangeID: newRange}, nil
}

type taskWriter struct {
	tlMgr *taskQueueManagerImpl
	db    *taskQueueDB
}

func (w *taskWriter) renewLeaseWithRetry(signalFatal bool) (taskQueueState, error) {
	var state taskQueueState
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if state, err = w.db.RenewLease(); err == nil {
			return state, nil
		}
	}
	if signalFatal {
		w.tlMgr.signalIfFatal(err)
	}
	return state, err
}

// allocTaskIDBlock renews the lease when the current ID block is used up.
func (w *taskWriter) allocTaskIDBlock() (int64, error) {
	state, err := w.renewLeaseWithRetry(true)
	if err != nil {
		return 0, err
	}
	return (state.rangeID-1)*100000 + 1, nil
}

func (w *taskWriter) initReadWriteState() error {
	// Fix (PR #1785): no unload upcall during startup, the synchronous error
	// already keeps the manager out of the engine map.
	state, err := w.renewLeaseWithRetry(false)
	if err != nil {
		return err
	}
	w.tlMgr.ackLevel = state.ackLevel
	return nil
}

type taskQueueManager interface {
	Start()
	Stop()
	AddTask(taskID int64) error
}

type taskQueueManagerImpl struct {
	taskQueueID        *taskQueueID
	db                 *taskQueueDB
	taskWriter         *taskWriter
	ackLevel           int64
	signalFatalProblem func(id *taskQueueID)
}

func newTaskQueueManager(e *matchingEngineImpl, taskQueue *taskQueueID) (taskQueueManager, error) {
	db := &taskQueueDB{id: *taskQueue, store: e.taskManager}
	tlMgr := &taskQueueManagerImpl{
		taskQueueID:        taskQueue,
		db:                 db,
		signalFatalProblem: e.unloadTaskQueue,
	}
	tlMgr.taskWriter = &taskWriter{tlMgr: tlMgr, db: db}
	// Lease acquisition happens in the constructor, i.e. under the engine lock.
	if err := tlMgr.taskWriter.initReadWriteState(); err != nil {
		return nil, err
	}
	return tlMgr, nil
}

func (c *taskQueueManagerImpl) signalIfFatal(err error) bool {
	var condfail *ConditionFailedError
	if errors.As(err, &condfail) {
		c.signalFatalProblem(c.taskQueueID)
		return true
	}
	return false
}

func (c *taskQueueManagerImpl) Start() {}
func (c *taskQueueManagerImpl) Stop()  {}
func (c *taskQueueManagerImpl) AddTask(id int64) error {
	_, err := c.taskWriter.allocTaskIDBlock()
	return err
}

type matchingEngineImpl struct {
	taskManager    taskManager
	taskQueuesLock sync.RWMutex
	taskQueues     map[taskQueueID]taskQueueManager
}

func (e *matchingEngineImpl) getTaskQueueManager(taskQueue *taskQueueID) (taskQueueManager, error) {
	e.taskQueuesLock.RLock()
	if result, ok := e.taskQueues[*taskQueue]; ok {
		e.taskQueuesLock.RUnlock()
		return result, nil
	}
	e.taskQueuesLock.RUnlock()

	e.taskQueuesLock.Lock()
	if result, ok := e.taskQueues[*taskQueue]; ok {
		e.taskQueuesLock.Unlock()
		return result, nil
	}
	mgr, err := newTaskQueueManager(e, taskQueue)
	if err != nil {
		e.taskQueuesLock.Unlock()
		return nil, err
	}
	e.taskQueues[*taskQueue] = mgr
	e.taskQueuesLock.Unlock()
	mgr.Start()
	return mgr, nil
}

func (e *matchingEngineImpl) unloadTaskQueue(id *taskQueueID) {
	e.taskQueuesLock.Lock()
	tlMgr, ok := e.taskQueues[*id]
	if ok {
		delete(e.taskQueues, *id)
	}
	e.taskQueuesLock.Unlock()
	if ok {
		tlMgr.Stop()
	}
}

func (e *matchingEngineImpl) AddWorkflowTask(namespaceID, queue string, taskID int64) error {
	tlMgr, err := e.getTaskQueueManager(&taskQueueID{namespaceID: namespaceID, name: queue})
	if err != nil {
		return err
	}
	return tlMgr.AddTask(taskID)
}

// stolenLeaseStore simulates a partition whose lease was taken by another host.
type stolenLeaseStore struct{}

func (stolenLeaseStore) LeaseTaskQueue(id taskQueueID, rangeID int64) (int64, error) {
	return 0, &ConditionFailedError{Msg: "range id mismatch: partition owned by another host"}
}

func main() {
	e := &matchingEngineImpl{
		taskManager: stolenLeaseStore{},
		taskQueues:  make(map[taskQueueID]taskQueueManager),
	}
	err := e.AddWorkflowTask("ns-1", "orders", 42)
	fmt.Println("AddWorkflowTask returned:", err)
}
