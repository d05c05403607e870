// Project: gVisor (pkg/sentry/kernel/task_signals.go, task_exit.go, threads.go)
// Bug: the sentry lock order is TaskSet.mu -> SignalHandlers.mu. A signal-delivery path
// (ThreadGroup.SendSignal filling in SignalInfo) held tg.signalHandlers.mu and then took
// TaskSet.mu.RLock to translate the sender's TID into the target's PID namespace, while
// the exit path (Task.exitNotifyLocked) holds TaskSet.mu for writing and then takes the
// parent's signalHandlers.mu to queue SIGCHLD. AB-BA between the two goroutines.
// Upstream fix: resolve the IDs under TaskSet.mu.RLock *before* acquiring
// signalHandlers.mu (respecting the documented lock order). Exact commit not recalled;
// shape modelled faithfully.
package main

import (
	"fmt"
	"sync"
	"time"
)

type ThreadID int32

type SignalInfo struct {
	Signo int
	PID   ThreadID
}

type SignalHandlers struct {
	mu sync.Mutex
}

type TaskSet struct {
	mu sync.RWMutex
	// Root PID namespace: tids maps tasks to their IDs.
	tids map[*Task]ThreadID
}

type ThreadGroup struct {
	name           string
	ts             *TaskSet
	signalHandlers *SignalHandlers
	pendingSignals []SignalInfo
	leader         *Task
	parent         *ThreadGroup
	exiting        bool
}

type Task struct {
	tg *ThreadGroup
}

// IDOfTask requires TaskSet.mu (read).
func (ts *TaskSet) IDOfTask(t *Task) ThreadID {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	return ts.tids[t]
}

// sendSignalLocked requires tg.signalHandlers.mu.
func (tg *ThreadGroup) sendSignalLocked(info SignalInfo) {
	tg.pendingSignals = append(tg.pendingSignals, info)
}

// SendSignal sends a signal from sender to tg.
func (tg *ThreadGroup) SendSignal(sender *Task, signo int) error {
	// Lock order: TaskSet.mu before signalHandlers.mu, so resolve IDs first.
	info := SignalInfo{Signo: signo}
	if sender != nil {
		info.PID = tg.ts.IDOfTask(sender)
	}
	tg.signalHandlers.mu.Lock()
	defer tg.signalHandlers.mu.Unlock()
	if tg.exiting {
		return fmt.Errorf("thread group %s is exiting", tg.name)
	}
	time.Sleep(5 * time.Millisecond) // checking signal masks / ignored dispositions
	tg.sendSignalLocked(info)
	return nil
}

// exitNotifyLocked requires TaskSet.mu (write); notifies the parent with SIGCHLD.
func (t *Task) exitNotifyLocked() {
	parent := t.tg.parent
	if parent == nil {
		return
	}
	parent.signalHandlers.mu.Lock()
	defer parent.signalHandlers.mu.Unlock()
	parent.sendSignalLocked(SignalInfo{Signo: 17, PID: t.tg.ts.tids[t]})
}

func (t *Task) exit() {
	ts := t.tg.ts
	ts.mu.Lock()
	defer ts.mu.Unlock()
	time.Sleep(5 * time.Millisecond) // reparenting children
	t.exitNotifyLocked()
	delete(ts.tids, t)
}

func main() {
	ts := &TaskSet{tids: map[*Task]ThreadID{}}
	initTG := &ThreadGroup{name: "init", ts: ts, signalHandlers: &SignalHandlers{}}
	initT := &Task{tg: initTG}
	initTG.leader = initT
	childTG := &ThreadGroup{name: "child", ts: ts, signalHandlers: &SignalHandlers{}, parent: initTG}
	childT := &Task{tg: childTG}
	childTG.leader = childT
	otherTG := &ThreadGroup{name: "kill", ts: ts, signalHandlers: &SignalHandlers{}}
	otherT := &Task{tg: otherTG}
	ts.tids[initT], ts.tids[childT], ts.tids[otherT] = 1, 2, 3

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = initTG.SendSignal(otherT, 15) }() // kill(1, SIGTERM)
	go func() { defer wg.Done(); childT.exit() }()                     // child exits, SIGCHLD to init
	wg.Wait()
	fmt.Println("pending on init:", len(initTG.pendingSignals))
}
