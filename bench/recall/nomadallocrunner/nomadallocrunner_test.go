// Project: hashicorp/nomad (client/allocrunner + taskrunner).
// Bug (approximate): AllocRunner.Alloc() held ar.stateLock while reading every
// task's state through TaskRunner.TaskState() (tr.stateLock), while
// TaskRunner.UpdateState() held tr.stateLock and invoked the state-updater
// callback AllocRunner.TaskStateUpdated(), which takes ar.stateLock:
// AB-BA between ar.stateLock and tr.stateLock.
// Fix: UpdateState releases tr.stateLock before notifying the alloc runner.
package nomadallocrunner

import (
	"sync"
	"testing"
	"time"
)

type TaskEvent struct {
	Type string
	Time int64
}

type TaskState struct {
	State  string
	Failed bool
	Events []*TaskEvent
}

func (ts *TaskState) Copy() *TaskState {
	c := *ts
	c.Events = append([]*TaskEvent(nil), ts.Events...)
	return &c
}

// TaskStateHandler is implemented by the alloc runner.
type TaskStateHandler interface {
	TaskStateUpdated()
}

type TaskRunner struct {
	taskName     string
	stateLock    sync.Mutex
	state        *TaskState
	stateUpdater TaskStateHandler
}

func (tr *TaskRunner) TaskState() *TaskState {
	tr.stateLock.Lock()
	defer tr.stateLock.Unlock()
	return tr.state.Copy()
}

func (tr *TaskRunner) appendEvent(ev *TaskEvent) {
	tr.state.Events = append(tr.state.Events, ev)
}

func (tr *TaskRunner) UpdateState(state string, ev *TaskEvent) {
	tr.stateLock.Lock()
	defer tr.stateLock.Unlock()
	tr.appendEvent(ev)
	tr.state.State = state
	time.Sleep(50 * time.Millisecond)  // persist task state to the client state DB
	tr.stateUpdater.TaskStateUpdated() // BUG: callback with tr.stateLock held
}

type Allocation struct {
	ID           string
	ClientStatus string
	TaskStates   map[string]*TaskState
}

type AllocRunner struct {
	stateLock sync.Mutex
	alloc     *Allocation
	tasks     map[string]*TaskRunner
}

func (ar *AllocRunner) getClientStatus(states map[string]*TaskState) string {
	for _, s := range states {
		if s.State != "dead" {
			return "running"
		}
	}
	return "complete"
}

// TaskStateUpdated implements TaskStateHandler.
func (ar *AllocRunner) TaskStateUpdated() {
	ar.stateLock.Lock()
	defer ar.stateLock.Unlock()
	ar.alloc.ClientStatus = "pending-sync"
}

func (ar *AllocRunner) clientAlloc(states map[string]*TaskState) *Allocation {
	a := &Allocation{ID: ar.alloc.ID, TaskStates: states}
	a.ClientStatus = ar.getClientStatus(states)
	return a
}

// Alloc returns the client view of the allocation (used by the client's
// allocSync loop to push updates to the servers).
func (ar *AllocRunner) Alloc() *Allocation {
	ar.stateLock.Lock()
	defer ar.stateLock.Unlock()
	time.Sleep(50 * time.Millisecond)
	states := make(map[string]*TaskState, len(ar.tasks))
	for name, tr := range ar.tasks {
		states[name] = tr.TaskState()
	}
	return ar.clientAlloc(states)
}

func TestTaskDiesDuringAllocSync(t *testing.T) {
	ar := &AllocRunner{alloc: &Allocation{ID: "a1"}, tasks: map[string]*TaskRunner{}}
	tr := &TaskRunner{taskName: "web", state: &TaskState{State: "running"}, stateUpdater: ar}
	ar.tasks[tr.taskName] = tr

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		tr.UpdateState("dead", &TaskEvent{Type: "Terminated", Time: time.Now().UnixNano()})
	}()
	go func() {
		defer wg.Done()
		t.Logf("client status: %s", ar.Alloc().ClientStatus)
	}()
	wg.Wait()
}
