package retake

import "sync"

// A callee that requires the caller's lock (declared), lets it go and
// takes another lock before taking it back with a defer (gVisor's
// ptraceSignalLocked: "can't lock the TaskSet mutex while holding a
// signal mutex") takes nothing under it: no edge from it, and the
// deferred Lock is a retake, not a double lock. Taking the other lock
// with the caller's still held is an edge.
type TaskSet struct{ mu sync.Mutex }

type Signals struct {
	mu      sync.Mutex
	pending int // +checklocks:mu
}

type Task struct {
	sig   *Signals
	owner *TaskSet
}

// +checklocks:t.sig.mu
func (t *Task) stopLocked() bool {
	t.sig.mu.Unlock()
	defer t.sig.mu.Lock()
	t.owner.mu.Lock()
	defer t.owner.mu.Unlock()
	return true
}

// +checklocks:t.sig.mu
func (t *Task) notifyLocked() {
	t.owner.mu.Lock()
	t.owner.mu.Unlock()
}

func (t *Task) interrupt() {
	t.sig.mu.Lock()
	defer t.sig.mu.Unlock()
	if t.stopLocked() {
		t.sig.pending = 0
	}
}

func (t *Task) notify() {
	t.sig.mu.Lock()
	t.notifyLocked()
	t.sig.mu.Unlock()
}

func sendAll(ts *TaskSet, sig *Signals) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	sig.mu.Lock() // want `lock order inversion: Signals.mu then TaskSet.mu in Task.notifyLocked \(declared.go:33 -> declared.go:34\) but TaskSet.mu then Signals.mu in sendAll \(declared.go:53 -> declared.go:55\) \[lock-order\]`
	sig.pending++
	sig.mu.Unlock()
}
