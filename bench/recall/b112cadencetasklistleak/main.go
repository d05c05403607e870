// Project: uber/cadence, now cadence-workflow/cadence (service/matching/matchingEngine.go getTaskListManager, service/matching/taskListManager.go newTaskListManager, common/cache/domainCache.go), v0.3 era (version approximate), June 2018.
// Bug: getTaskListManager write-locks taskListsLock to create a missing task list manager, and newTaskListManager had just started resolving the domain name through the domain cache, so it can now fail; on that error path getTaskListManager returned without unlocking, and the next poll or add-task request for any task list blocks forever on taskListsLock (PR #909 "Deadlock in matching engine", which adds the missing Unlock).
package main

import (
	"errors"
	"fmt"
	"sync"
)

type taskListID struct {
	domainID     string
	taskListName string
	taskType     int
}

const persistenceTaskListTypeDecision = 0

// DomainCache resolves domain IDs; a miss goes to the metadata store.
type DomainCache interface {
	GetDomainName(id string) (string, error)
}

type domainCache struct {
	sync.RWMutex
	nameByID map[string]string
}

func (c *domainCache) GetDomainName(id string) (string, error) {
	c.RLock()
	defer c.RUnlock()
	name, ok := c.nameByID[id]
	if !ok {
		return "", errors.New("EntityNotExistsError: domain " + id + " does not exist")
	}
	return name, nil
}

type taskListManager interface {
	Start() error
	Stop()
	AddTask(workflowID string) error
	GetTaskCount() int
}

type taskListManagerImpl struct {
	sync.Mutex
	engine     *matchingEngineImpl
	taskListID *taskListID
	domainName string
	tasks      []string
}

func newTaskListManager(e *matchingEngineImpl, taskList *taskListID) (taskListManager, error) {
	domainName, err := e.domainCache.GetDomainName(taskList.domainID)
	if err != nil {
		return nil, err
	}
	return &taskListManagerImpl{engine: e, taskListID: taskList, domainName: domainName}, nil
}

func (c *taskListManagerImpl) Start() error { return nil }
func (c *taskListManagerImpl) Stop()        { c.engine.removeTaskListManager(c.taskListID) }

func (c *taskListManagerImpl) AddTask(workflowID string) error {
	c.Lock()
	defer c.Unlock()
	c.tasks = append(c.tasks, workflowID)
	return nil
}

func (c *taskListManagerImpl) GetTaskCount() int {
	c.Lock()
	defer c.Unlock()
	return len(c.tasks)
}

type matchingEngineImpl struct {
	domainCache   DomainCache
	taskListsLock sync.RWMutex // locks mutation of taskLists
	taskLists     map[taskListID]taskListManager
}

func (e *matchingEngineImpl) getTaskListManager(taskList *taskListID) (taskListManager, error) {
	// The first check is an optimization so almost all requests will have a task list manager
	// and return avoiding the write lock
	e.taskListsLock.RLock()
	if result, ok := e.taskLists[*taskList]; ok {
		e.taskListsLock.RUnlock()
		return result, nil
	}
	e.taskListsLock.RUnlock()
	// If it gets here, write lock and check again in case a task list is created between the two locks
	e.taskListsLock.Lock()
	if result, ok := e.taskLists[*taskList]; ok {
		e.taskListsLock.Unlock()
		return result, nil
	}
	mgr, err := newTaskListManager(e, taskList)
	if err != nil {
		return nil, err
	}
	e.taskLists[*taskList] = mgr
	e.taskListsLock.Unlock()
	if err := mgr.Start(); err != nil {
		return nil, err
	}
	return mgr, nil
}

func (e *matchingEngineImpl) removeTaskListManager(id *taskListID) {
	e.taskListsLock.Lock()
	defer e.taskListsLock.Unlock()
	delete(e.taskLists, *id)
}

// AddDecisionTask is called by history to schedule a decision task.
func (e *matchingEngineImpl) AddDecisionTask(domainID, taskListName, workflowID string) error {
	taskList := &taskListID{domainID: domainID, taskListName: taskListName, taskType: persistenceTaskListTypeDecision}
	tlMgr, err := e.getTaskListManager(taskList)
	if err != nil {
		return err
	}
	return tlMgr.AddTask(workflowID)
}

func main() {
	e := &matchingEngineImpl{
		domainCache: &domainCache{nameByID: map[string]string{"d-1": "payments"}},
		taskLists:   make(map[taskListID]taskListManager),
	}
	// A request for a domain that was just deleted (or a metadata store blip).
	err := e.AddDecisionTask("d-deleted", "cleanup-tl", "wf-1")
	fmt.Println("first AddDecisionTask:", err)

	// Any later request on this matching host.
	err = e.AddDecisionTask("d-1", "payments-tl", "wf-2")
	fmt.Println("second AddDecisionTask:", err)
}
