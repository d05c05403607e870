// Project: uber/cadence, now cadence-workflow/cadence (service/history/ndc/transaction_manager_new_workflow.go createWorkflow and createAsZombie, service/history/execution/context.go ReapplyEvents, service/history/engine historyEngineImpl.ReapplyEvents, service/history/execution/cache.go), v0.18/v0.19, March 2021.
// Bug: when NDC replication creates an older run as a zombie, createWorkflow has already loaded and locked the current run of the same workflow ID through the execution cache, and createAsZombie then calls targetWorkflow.getContext().ReapplyEvents, which for a domain active in this cluster calls shard.GetEngine().ReapplyEvents; the engine loads the current run through the same cache and locks its context mutex a second time, so the replication goroutine deadlocks on the current run's lock (PR #4085 "Release current workflow lock on create as zombie", cherry-picked to Temporal as PR #1418; code approximate, the real context lock is a context-aware locks.Mutex).
package main

import (
	"errors"
	"fmt"
	"sync"
)

type workflowKey struct{ domainID, workflowID, runID string }

type mutableState struct {
	runID          string
	lastWriteVer   int64
	pendingEvents  []string
	reappliedCount int
}

// Context is the per-run execution context handed out by the cache.
type Context interface {
	Lock()
	Unlock()
	GetMutableState() *mutableState
	ReapplyEvents(events []string) error
}

type contextImpl struct {
	mutex sync.Mutex
	key   workflowKey
	ms    *mutableState
	shard *shardContext
}

func (c *contextImpl) Lock()                          { c.mutex.Lock() }
func (c *contextImpl) Unlock()                        { c.mutex.Unlock() }
func (c *contextImpl) GetMutableState() *mutableState { return c.ms }

// ReapplyEvents: "this function should only be used to workflow which is not
// the caller, or otherwise deadlock will appear".
func (c *contextImpl) ReapplyEvents(events []string) error {
	if len(events) == 0 {
		return nil
	}
	// domain is active in the current cluster: reapply locally
	return c.shard.GetEngine().ReapplyEvents(c.key.domainID, c.key.workflowID, c.key.runID, events)
}

type ReleaseFunc func(err error)

type executionCache struct {
	sync.Mutex
	contexts    map[workflowKey]*contextImpl
	currentRuns map[string]string // workflowID -> current runID (stands in for the DB)
	shard       *shardContext
}

func (c *executionCache) GetOrCreateWorkflowExecution(domainID, workflowID, runID string) (Context, ReleaseFunc, error) {
	c.Lock()
	if runID == "" {
		runID = c.currentRuns[workflowID]
	}
	key := workflowKey{domainID, workflowID, runID}
	ctx, ok := c.contexts[key]
	if !ok {
		ctx = &contextImpl{key: key, ms: &mutableState{runID: runID}, shard: c.shard}
		c.contexts[key] = ctx
	}
	c.Unlock()

	ctx.Lock()
	return ctx, func(error) { ctx.Unlock() }, nil
}

type Engine interface {
	ReapplyEvents(domainID, workflowID, runID string, events []string) error
}

type shardContext struct{ engine Engine }

func (s *shardContext) GetEngine() Engine { return s.engine }

type historyEngineImpl struct{ executionCache *executionCache }

func (e *historyEngineImpl) updateWorkflowExecutionWithAction(domainID, workflowID string, action func(Context, *mutableState) error) (retErr error) {
	wfContext, release, err := e.executionCache.GetOrCreateWorkflowExecution(domainID, workflowID, "")
	if err != nil {
		return err
	}
	defer func() { release(retErr) }()
	return action(wfContext, wfContext.GetMutableState())
}

func (e *historyEngineImpl) ReapplyEvents(domainID, workflowID, runID string, events []string) error {
	// remove run id from the execution so that reapply events to the current run
	return e.updateWorkflowExecutionWithAction(domainID, workflowID, func(_ Context, ms *mutableState) error {
		ms.reappliedCount += len(events)
		return nil
	})
}

type nDCWorkflow interface {
	getContext() Context
	getMutableState() *mutableState
	getReleaseFn() ReleaseFunc
	happensAfter(that nDCWorkflow) (bool, error)
}

type nDCWorkflowImpl struct {
	context   Context
	ms        *mutableState
	releaseFn ReleaseFunc
}

func (w *nDCWorkflowImpl) getContext() Context            { return w.context }
func (w *nDCWorkflowImpl) getMutableState() *mutableState { return w.ms }
func (w *nDCWorkflowImpl) getReleaseFn() ReleaseFunc      { return w.releaseFn }
func (w *nDCWorkflowImpl) happensAfter(that nDCWorkflow) (bool, error) {
	return w.ms.lastWriteVer > that.getMutableState().lastWriteVer, nil
}

type nDCTransactionMgr struct{ executionCache *executionCache }

func (r *nDCTransactionMgr) loadNDCWorkflow(domainID, workflowID, runID string) (nDCWorkflow, error) {
	ctx, release, err := r.executionCache.GetOrCreateWorkflowExecution(domainID, workflowID, runID)
	if err != nil {
		return nil, err
	}
	return &nDCWorkflowImpl{context: ctx, ms: ctx.GetMutableState(), releaseFn: release}, nil
}

type nDCTransactionMgrForNewWorkflow struct{ transactionMgr *nDCTransactionMgr }

func (r *nDCTransactionMgrForNewWorkflow) createWorkflow(targetWorkflow nDCWorkflow, domainID, workflowID, currentRunID string) error {
	currentWorkflow, err := r.transactionMgr.loadNDCWorkflow(domainID, workflowID, currentRunID)
	if err != nil {
		return err
	}
	targetIsNewer, err := targetWorkflow.happensAfter(currentWorkflow)
	if err != nil {
		return err
	}
	if !targetIsNewer {
		return r.createAsZombie(currentWorkflow, targetWorkflow)
	}
	return errors.New("create as current not modelled")
}

func (r *nDCTransactionMgrForNewWorkflow) createAsZombie(currentWorkflow, targetWorkflow nDCWorkflow) (retError error) {
	defer func() {
		targetWorkflow.getReleaseFn()(retError)
		currentWorkflow.getReleaseFn()(retError)
	}()

	events := targetWorkflow.getMutableState().pendingEvents
	// persist target as zombie (omitted), then reapply its signals to the current run
	return targetWorkflow.getContext().ReapplyEvents(events)
}

func main() {
	shard := &shardContext{}
	cache := &executionCache{
		contexts:    make(map[workflowKey]*contextImpl),
		currentRuns: map[string]string{"order-7": "run-current"},
		shard:       shard,
	}
	shard.engine = &historyEngineImpl{executionCache: cache}
	mgr := &nDCTransactionMgrForNewWorkflow{transactionMgr: &nDCTransactionMgr{executionCache: cache}}

	// replicated older run: a brand new context, locked by the replicator
	targetCtx := &contextImpl{
		key:   workflowKey{"dom-1", "order-7", "run-old"},
		ms:    &mutableState{runID: "run-old", lastWriteVer: 1, pendingEvents: []string{"WorkflowExecutionSignaled"}},
		shard: shard,
	}
	targetCtx.Lock()
	target := &nDCWorkflowImpl{context: targetCtx, ms: targetCtx.ms, releaseFn: func(error) { targetCtx.Unlock() }}
	cache.contexts[workflowKey{"dom-1", "order-7", "run-current"}] = &contextImpl{
		key: workflowKey{"dom-1", "order-7", "run-current"}, ms: &mutableState{runID: "run-current", lastWriteVer: 5}, shard: shard,
	}

	err := mgr.createWorkflow(target, "dom-1", "order-7", "run-current")
	fmt.Println("createWorkflow:", err)
}
