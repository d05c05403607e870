package callbackparam

import "sync"

// A callee that calls the function it is given on one of its branches,
// holding its own lock there: that branch re-locks when the function
// takes the lock, as a call written on the branch would (vitess'
// submitCallbackIfNonConflicting calling RetryMigration's closure under
// migrationMutex).
type Executor struct {
	mu   sync.Mutex
	rows map[string]string
}

func (e *Executor) Retry(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rows[id] = "queued"
}

func (e *Executor) submitIfFree(id string, retry func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.rows[id]; ok {
		retry()
		return
	}
	e.rows[id] = "new"
}

func (e *Executor) Submit(id string) {
	e.submitIfFree(id, func() { e.Retry(id) }) // want `Executor.mu locked again by Executor.submitIfFree -> Executor.Submit.func1 -> Executor.Retry \(at branch.go:\d+\) while held since branch.go:\d+: self-deadlock \[double-lock\]`
}

// submitThenRun lets the lock go before it calls the function. Silent.
func (e *Executor) submitThenRun(id string, retry func()) {
	e.mu.Lock()
	_, ok := e.rows[id]
	e.mu.Unlock()
	if ok {
		retry()
	}
}

func (e *Executor) SubmitFixed(id string) {
	e.submitThenRun(id, func() { e.Retry(id) })
}
