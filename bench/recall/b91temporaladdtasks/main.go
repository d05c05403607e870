// Project: temporalio/temporal (service/history/shard/context_impl.go ContextImpl.AddTasks/addTasksLocked, service/history/historyEngine.go NotifyNewTasks, service/history/timerQueueProcessor.go NotifyNewTasks), v1.16, May 2022.
// Bug: ContextImpl.AddTasks write-locks the shard through wLock() and, still holding it, addTasksLocked calls engine.NotifyNewTasks. For a workflow of a standby namespace the timer queue processor sets the standby processor's current time from shard.GetCurrentTime(remoteCluster), which read-locks the same shard lock, so the history goroutine deadlocks on the shard (PR #2823 "Fix potential deadlock in shard addTask", which notifies after releasing the shard lock; code approximate).
package main

import (
	"fmt"
	"sync"
	"time"
)

type Task struct {
	TaskID              int64
	VisibilityTimestamp time.Time
}

type AddHistoryTasksRequest struct {
	ShardID     int32
	NamespaceID string
	WorkflowID  string
	RangeID     int64
	Tasks       []*Task
}

type Namespace struct {
	id            string
	activeCluster string
}

func (n *Namespace) ActiveClusterName() string { return n.activeCluster }

type Engine interface {
	NotifyNewTasks(clusterName string, tasks []*Task)
}

type ContextImpl struct {
	shardID                   int32
	currentClusterName        string
	rwLock                    sync.RWMutex
	rangeID                   int64
	taskSequenceNumber        int64
	remoteClusterCurrentTime  map[string]time.Time
	engine                    Engine
	namespaces                map[string]*Namespace
	executionManagerTaskStore []*Task
}

func (s *ContextImpl) wLock()   { s.rwLock.Lock() }
func (s *ContextImpl) wUnlock() { s.rwLock.Unlock() }
func (s *ContextImpl) rLock()   { s.rwLock.RLock() }
func (s *ContextImpl) rUnlock() { s.rwLock.RUnlock() }

func (s *ContextImpl) GetCurrentTime(cluster string) time.Time {
	if cluster != s.currentClusterName {
		s.rLock()
		defer s.rUnlock()
		return s.remoteClusterCurrentTime[cluster]
	}
	return time.Now().UTC()
}

func (s *ContextImpl) AddTasks(request *AddHistoryTasksRequest) error {
	// do not try to get namespace cache within shard lock
	namespaceEntry, ok := s.namespaces[request.NamespaceID]
	if !ok {
		return fmt.Errorf("namespace %s not found", request.NamespaceID)
	}

	s.wLock()
	defer s.wUnlock()

	return s.addTasksLocked(request, namespaceEntry)
}

func (s *ContextImpl) addTasksLocked(request *AddHistoryTasksRequest, namespaceEntry *Namespace) error {
	for _, t := range request.Tasks {
		s.taskSequenceNumber++
		t.TaskID = s.taskSequenceNumber
	}
	request.RangeID = s.rangeID
	s.executionManagerTaskStore = append(s.executionManagerTaskStore, request.Tasks...)
	s.engine.NotifyNewTasks(namespaceEntry.ActiveClusterName(), request.Tasks)
	return nil
}

// ---- history engine and queue processors ----

type standbyTimerProcessor struct {
	mu          sync.Mutex
	currentTime time.Time
}

func (p *standbyTimerProcessor) setCurrentTime(t time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.currentTime = t
}

func (p *standbyTimerProcessor) notifyNewTimers(tasks []*Task) {}

type timerQueueProcessorImpl struct {
	shard                      *ContextImpl
	currentClusterName         string
	standbyTimerProcessorsLock sync.RWMutex
	standbyTimerProcessors     map[string]*standbyTimerProcessor
}

func (t *timerQueueProcessorImpl) NotifyNewTasks(clusterName string, timerTasks []*Task) {
	if clusterName == t.currentClusterName {
		return // active timer processor
	}
	t.standbyTimerProcessorsLock.RLock()
	standbyTimerProcessor, ok := t.standbyTimerProcessors[clusterName]
	t.standbyTimerProcessorsLock.RUnlock()
	if !ok {
		panic(fmt.Sprintf("Cannot find timer processor for %s.", clusterName))
	}
	standbyTimerProcessor.setCurrentTime(t.shard.GetCurrentTime(clusterName))
	standbyTimerProcessor.notifyNewTimers(timerTasks)
}

type queueProcessor interface {
	NotifyNewTasks(clusterName string, tasks []*Task)
}

type historyEngineImpl struct {
	queueProcessors map[string]queueProcessor
}

func (e *historyEngineImpl) NotifyNewTasks(clusterName string, tasks []*Task) {
	for _, p := range e.queueProcessors {
		p.NotifyNewTasks(clusterName, tasks)
	}
}

func main() {
	shard := &ContextImpl{
		shardID:                  3,
		currentClusterName:       "cluster-a",
		rangeID:                  12,
		remoteClusterCurrentTime: map[string]time.Time{"cluster-b": time.Now().Add(-time.Second)},
		namespaces: map[string]*Namespace{
			"ns-standby": {id: "ns-standby", activeCluster: "cluster-b"},
		},
	}
	timerProcessor := &timerQueueProcessorImpl{
		shard:                  shard,
		currentClusterName:     "cluster-a",
		standbyTimerProcessors: map[string]*standbyTimerProcessor{"cluster-b": {}},
	}
	shard.engine = &historyEngineImpl{queueProcessors: map[string]queueProcessor{"timer": timerProcessor}}

	// Task refresh / replication for a workflow whose namespace is active in
	// cluster-b generates a timer task on this (standby) shard.
	err := shard.AddTasks(&AddHistoryTasksRequest{
		ShardID:     3,
		NamespaceID: "ns-standby",
		WorkflowID:  "wf-1",
		Tasks:       []*Task{{VisibilityTimestamp: time.Now().Add(time.Minute)}},
	})
	fmt.Println("AddTasks:", err, "tasks stored:", len(shard.executionManagerTaskStore))
}
