// Project: temporalio/sdk-go, inherited from uber-go/cadence-client (internal/internal_task_handlers.go: workflowExecutionContextImpl.Unlock, onEviction; internal/common/cache/lru.go: lru.Delete, deleteInternal), sticky workflow cache, approximate reconstruction.
// Bug: when a workflow task fails, workflowExecutionContextImpl.Unlock(err) removes the context from the sticky cache while it still holds the context mutex; the LRU ran its RemovedFunc inline from deleteInternal, and that callback (onEviction) locks the same context mutex, so the poller goroutine deadlocks on itself. The fix runs the removal callback asynchronously (go c.rmFunc(entry.value)), which is why onEviction is documented as running "in separate goroutine".
package main

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- internal/common/cache ----

type RemovedFunc func(interface{})

type Options struct {
	RemovedFunc RemovedFunc
}

type Cache interface {
	Get(key string) interface{}
	Put(key string, value interface{}) interface{}
	Delete(key string)
	Size() int
}

type entryImpl struct {
	key   string
	value interface{}
}

type lru struct {
	mut      sync.Mutex
	byAccess *list.List
	byKey    map[string]*list.Element
	maxSize  int
	rmFunc   RemovedFunc
}

func New(maxSize int, opts *Options) Cache {
	return &lru{byAccess: list.New(), byKey: map[string]*list.Element{}, maxSize: maxSize, rmFunc: opts.RemovedFunc}
}

func (c *lru) Get(key string) interface{} {
	c.mut.Lock()
	defer c.mut.Unlock()
	if el := c.byKey[key]; el != nil {
		c.byAccess.MoveToFront(el)
		return el.Value.(*entryImpl).value
	}
	return nil
}

func (c *lru) Put(key string, value interface{}) interface{} {
	c.mut.Lock()
	defer c.mut.Unlock()
	if el := c.byKey[key]; el != nil {
		old := el.Value.(*entryImpl).value
		el.Value.(*entryImpl).value = value
		return old
	}
	c.byKey[key] = c.byAccess.PushFront(&entryImpl{key: key, value: value})
	if c.byAccess.Len() > c.maxSize {
		c.deleteInternal(c.byAccess.Back())
	}
	return nil
}

func (c *lru) Delete(key string) {
	c.mut.Lock()
	defer c.mut.Unlock()
	if el := c.byKey[key]; el != nil {
		c.deleteInternal(el)
	}
}

func (c *lru) Size() int {
	c.mut.Lock()
	defer c.mut.Unlock()
	return len(c.byKey)
}

func (c *lru) deleteInternal(element *list.Element) {
	entry := element.Value.(*entryImpl)
	if c.rmFunc != nil {
		c.rmFunc(entry.value)
	}
	c.byAccess.Remove(element)
	delete(c.byKey, entry.key)
}

// ---- internal/internal_workflow_cache.go ----

var (
	workflowCache     Cache
	workflowCacheLock sync.Mutex
)

func getWorkflowCache() Cache {
	workflowCacheLock.Lock()
	defer workflowCacheLock.Unlock()
	if workflowCache == nil {
		workflowCache = New(600, &Options{
			RemovedFunc: func(cachedEntity interface{}) {
				wc := cachedEntity.(*workflowExecutionContextImpl)
				wc.onEviction()
			},
		})
	}
	return workflowCache
}

func removeWorkflowContext(runID string) { getWorkflowCache().Delete(runID) }

// ---- internal/internal_task_handlers.go ----

type WorkflowInfo struct{ WorkflowID, RunID string }

type workflowExecutionContextImpl struct {
	mutex               sync.Mutex
	workflowInfo        *WorkflowInfo
	isWorkflowCompleted bool
	err                 error
	history             []string
	evicted             chan struct{}
}

func (w *workflowExecutionContextImpl) Lock() { w.mutex.Lock() }

func (w *workflowExecutionContextImpl) Unlock(err error) {
	if err != nil || w.err != nil || w.isWorkflowCompleted {
		if getWorkflowCache().Get(w.workflowInfo.RunID) != nil {
			// also clears state asynchronously via cache eviction
			removeWorkflowContext(w.workflowInfo.RunID)
		} else {
			w.clearState()
		}
	}
	w.mutex.Unlock()
}

func (w *workflowExecutionContextImpl) clearState() { w.history = nil }

func (w *workflowExecutionContextImpl) onEviction() {
	// onEviction is run by LRU cache's removeFunc in separate goroutinue
	w.mutex.Lock()
	w.clearState()
	w.mutex.Unlock()
	close(w.evicted)
}

type workflowTaskHandlerImpl struct{}

func (wth *workflowTaskHandlerImpl) getOrCreateWorkflowContext(info *WorkflowInfo) *workflowExecutionContextImpl {
	if wc, ok := getWorkflowCache().Get(info.RunID).(*workflowExecutionContextImpl); ok {
		wc.Lock()
		return wc
	}
	wc := &workflowExecutionContextImpl{workflowInfo: info, evicted: make(chan struct{})}
	getWorkflowCache().Put(info.RunID, wc)
	wc.Lock()
	return wc
}

func (wth *workflowTaskHandlerImpl) ProcessWorkflowTask(info *WorkflowInfo, events []string) (wc *workflowExecutionContextImpl, err error) {
	wc = wth.getOrCreateWorkflowContext(info)
	defer func() { wc.Unlock(err) }()
	for _, e := range events {
		if e == "ActivityTaskScheduled(unexpected)" {
			return wc, errors.New("nondeterministic workflow: history mismatch")
		}
		wc.history = append(wc.history, e)
	}
	return wc, nil
}

func main() {
	wth := &workflowTaskHandlerImpl{}
	info := &WorkflowInfo{WorkflowID: "order-42", RunID: "run-1"}
	wc, err := wth.ProcessWorkflowTask(info, []string{"WorkflowExecutionStarted", "WorkflowTaskScheduled"})
	fmt.Println("first workflow task:", err, "cached:", getWorkflowCache().Size())
	_, err = wth.ProcessWorkflowTask(info, []string{"TimerStarted", "ActivityTaskScheduled(unexpected)"})
	fmt.Println("second workflow task:", err)
	select {
	case <-wc.evicted:
	case <-time.After(2 * time.Second):
		panic("context never evicted")
	}
	fmt.Println("cached contexts:", getWorkflowCache().Size())
}
