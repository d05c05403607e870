// Project: temporalio/temporal (service/history, transfer queue active executor)
// Bug: the history cache hands out one lock per workflow execution (a map keyed by
//      namespace/workflowID/runID). processCloseExecution kept the closing workflow's
//      lock while it called into other workflows: a closing child recorded its
//      completion in the parent (RecordChildExecutionCompleted locks the parent),
//      while the closing parent applied its ParentClosePolicy and requested
//      cancellation of the child (RequestCancelWorkflowExecution locks the child).
//      The two tasks take the per-workflow locks in opposite orders.
// Fix: "release the context lock since we no longer need mutable state builder and
//      the rest of logic is making RPC call, which takes time" -- release(nil) right
//      after reading the mutable state, before calling the other workflow.

package temporalchild

import (
	"errors"
	"sync"
	"testing"
	"time"
)

var ErrWorkflowCompleted = errors.New("workflow execution already completed")

type workflowKey struct{ NamespaceID, WorkflowID, RunID string }

type childInfo struct {
	key               workflowKey
	parentClosePolicy string // "TERMINATE", "REQUEST_CANCEL", "ABANDON"
}

type mutableState struct {
	running         bool
	cancelRequested bool
	parent          *workflowKey
	pendingChildren map[string]childInfo
	history         []string
}

// executionStore is the persistence layer; reads are slow (a DB round trip).
type executionStore struct {
	mu      sync.Mutex
	latency time.Duration
	rows    map[workflowKey]*mutableState
}

func (s *executionStore) GetWorkflowExecution(key workflowKey) (*mutableState, error) {
	time.Sleep(s.latency)
	s.mu.Lock()
	defer s.mu.Unlock()
	if ms, ok := s.rows[key]; ok {
		return ms, nil
	}
	return nil, errors.New("workflow execution not found")
}

type workflowContext struct {
	key          workflowKey
	mu           sync.Mutex
	mutableState *mutableState
	refCount     int
}

func (wc *workflowContext) loadMutableState(store *executionStore) (*mutableState, error) {
	var err error
	if wc.mutableState == nil {
		wc.mutableState, err = store.GetWorkflowExecution(wc.key)
	}
	return wc.mutableState, err
}

type historyCache struct {
	sync.Mutex
	contexts map[workflowKey]*workflowContext
}

func (c *historyCache) GetOrCreateWorkflowExecution(key workflowKey) (*workflowContext, func(error)) {
	c.Lock()
	wc := c.contexts[key]
	if wc == nil {
		wc = &workflowContext{key: key}
		c.contexts[key] = wc
	}
	wc.refCount++
	c.Unlock()

	wc.mu.Lock()
	var once sync.Once
	return wc, func(error) {
		once.Do(func() {
			wc.mu.Unlock()
			c.Lock()
			wc.refCount--
			c.Unlock()
		})
	}
}

type historyEngine struct {
	cache *historyCache
	store *executionStore
}

func (e *historyEngine) updateWorkflow(key workflowKey, action func(*mutableState) error) (retErr error) {
	wc, release := e.cache.GetOrCreateWorkflowExecution(key)
	defer func() { release(retErr) }()
	ms, err := wc.loadMutableState(e.store)
	if err == nil {
		err = action(ms)
	}
	return err
}

func (e *historyEngine) RecordChildExecutionCompleted(parent workflowKey, childID, event string) error {
	return e.updateWorkflow(parent, func(ms *mutableState) error {
		if !ms.running {
			return ErrWorkflowCompleted
		}
		delete(ms.pendingChildren, childID)
		ms.history = append(ms.history, "ChildWorkflowExecution"+event)
		return nil
	})
}

func (e *historyEngine) RequestCancelWorkflowExecution(key workflowKey) error {
	return e.updateWorkflow(key, func(ms *mutableState) error {
		if !ms.running {
			return ErrWorkflowCompleted
		}
		ms.cancelRequested = true
		ms.history = append(ms.history, "WorkflowExecutionCancelRequested")
		return nil
	})
}

type transferActiveTaskExecutor struct {
	cache  *historyCache
	store  *executionStore
	engine *historyEngine
}

func (t *transferActiveTaskExecutor) processCloseExecution(key workflowKey) (retErr error) {
	wc, release := t.cache.GetOrCreateWorkflowExecution(key)
	defer func() { release(retErr) }()
	ms, err := wc.loadMutableState(t.store)
	if err != nil {
		return err
	}
	if ms.running {
		return nil // stale task
	}
	parent := ms.parent
	completionEvent := ms.history[len(ms.history)-1]
	var children []childInfo
	for _, ci := range ms.pendingChildren {
		children = append(children, ci)
	}

	if parent != nil {
		err := t.engine.RecordChildExecutionCompleted(*parent, key.WorkflowID, completionEvent)
		if err != nil && !errors.Is(err, ErrWorkflowCompleted) {
			return err
		}
	}
	return t.processParentClosePolicy(children)
}

func (t *transferActiveTaskExecutor) processParentClosePolicy(children []childInfo) error {
	for _, ci := range children {
		if ci.parentClosePolicy != "REQUEST_CANCEL" {
			continue // TERMINATE is handled by the parent-close-policy worker; ABANDON ignores
		}
		err := t.engine.RequestCancelWorkflowExecution(ci.key)
		if err != nil && !errors.Is(err, ErrWorkflowCompleted) {
			return err
		}
	}
	return nil
}

func TestParentAndChildCloseConcurrently(t *testing.T) {
	parentKey := workflowKey{"ns", "order-42", "run-p"}
	childKey := workflowKey{"ns", "payment-42", "run-c"}
	store := &executionStore{latency: 30 * time.Millisecond, rows: map[workflowKey]*mutableState{
		parentKey: {history: []string{"WorkflowExecutionCompleted"},
			pendingChildren: map[string]childInfo{childKey.WorkflowID: {key: childKey, parentClosePolicy: "REQUEST_CANCEL"}}},
		childKey: {history: []string{"Completed"}, parent: &parentKey},
	}}
	cache := &historyCache{contexts: make(map[workflowKey]*workflowContext)}
	exec := &transferActiveTaskExecutor{cache: cache, store: store, engine: &historyEngine{cache: cache, store: store}}

	errs := make(chan error, 2)
	go func() { errs <- exec.processCloseExecution(childKey) }()  // transfer queue shard A
	go func() { errs <- exec.processCloseExecution(parentKey) }() // transfer queue shard B
	if err1, err2 := <-errs, <-errs; err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
}
