// Project: docker/swarmkit, now moby/swarmkit (agent/worker.go), v1.12.0 (Docker 1.12, 2016).
// Bug: the goroutine that worker.Listen starts to drop a listener when its session context ends does
// w.mu.Lock() followed by "defer w.mu.Lock()" instead of Unlock, so it blocks forever on w.mu while holding it,
// and every later Listen, Assign and task status report (statusReporterFunc takes w.mu.RLock) hangs.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type TaskStatus struct{ State string }

type Task struct {
	ID           string
	DesiredState string
	Status       TaskStatus
}

// StatusReporter receives updates to task status.
type StatusReporter interface {
	UpdateTaskStatus(ctx context.Context, taskID string, status *TaskStatus) error
}

type statusReporterFunc func(ctx context.Context, taskID string, status *TaskStatus) error

func (fn statusReporterFunc) UpdateTaskStatus(ctx context.Context, taskID string, status *TaskStatus) error {
	return fn(ctx, taskID, status)
}

// Tx and DB stand in for the agent's boltdb task database.
type Tx struct{ statuses map[string]*TaskStatus }

type DB struct {
	rwlock sync.Mutex
	tx     Tx
}

func (db *DB) Update(fn func(tx *Tx) error) error {
	db.rwlock.Lock()
	defer db.rwlock.Unlock()
	return fn(&db.tx)
}

func PutTaskStatus(tx *Tx, id string, status *TaskStatus) error {
	tx.statuses[id] = status
	return nil
}

// Worker implements the core task management logic and persistence.
type Worker interface {
	Assign(ctx context.Context, tasks []*Task) error
	Listen(ctx context.Context, reporter StatusReporter)
}

type statusReporterKey struct {
	StatusReporter
}

type taskManager struct {
	task     *Task
	reporter StatusReporter
	updateq  chan *Task
}

func newTaskManager(ctx context.Context, task *Task, reporter StatusReporter) *taskManager {
	tm := &taskManager{task: task, reporter: reporter, updateq: make(chan *Task, 8)}
	go tm.run(ctx)
	tm.updateq <- task
	return tm
}

func (tm *taskManager) Update(ctx context.Context, task *Task) error {
	tm.updateq <- task
	return nil
}

func (tm *taskManager) run(ctx context.Context) {
	for t := range tm.updateq {
		status := &TaskStatus{State: "RUNNING (" + t.DesiredState + ")"}
		tm.reporter.UpdateTaskStatus(ctx, t.ID, status)
	}
}

type worker struct {
	db           *DB
	listeners    map[*statusReporterKey]struct{}
	taskManagers map[string]*taskManager
	mu           sync.RWMutex
}

func newWorker(db *DB) *worker {
	return &worker{
		db:           db,
		listeners:    make(map[*statusReporterKey]struct{}),
		taskManagers: make(map[string]*taskManager),
	}
}

func (w *worker) Assign(ctx context.Context, tasks []*Task) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, task := range tasks {
		if mgr, ok := w.taskManagers[task.ID]; ok {
			mgr.Update(ctx, task)
			continue
		}
		w.taskManagers[task.ID] = w.newTaskManager(ctx, task)
	}
	return nil
}

func (w *worker) Listen(ctx context.Context, reporter StatusReporter) {
	w.mu.Lock()
	defer w.mu.Unlock()

	key := &statusReporterKey{reporter}
	w.listeners[key] = struct{}{}

	go func() {
		<-ctx.Done()
		w.mu.Lock()
		defer w.mu.Lock()
		delete(w.listeners, key) // remove the listener if the context is closed.
	}()
}

func (w *worker) newTaskManager(ctx context.Context, task *Task) *taskManager {
	return newTaskManager(ctx, task, statusReporterFunc(func(ctx context.Context, taskID string, status *TaskStatus) error {
		w.mu.RLock()
		defer w.mu.RUnlock()

		return w.db.Update(func(tx *Tx) error {
			return w.updateTaskStatus(ctx, tx, taskID, status)
		})
	}))
}

func (w *worker) updateTaskStatus(ctx context.Context, tx *Tx, taskID string, status *TaskStatus) error {
	if err := PutTaskStatus(tx, taskID, status); err != nil {
		return err
	}
	for key := range w.listeners {
		key.StatusReporter.UpdateTaskStatus(ctx, taskID, status)
	}
	return nil
}

// session forwards task statuses to the manager's dispatcher.
type session struct {
	id      int
	updates chan string
}

func (s *session) UpdateTaskStatus(ctx context.Context, taskID string, status *TaskStatus) error {
	s.updates <- fmt.Sprintf("session %d: %s %s", s.id, taskID, status.State)
	return nil
}

func main() {
	var w Worker = newWorker(&DB{tx: Tx{statuses: map[string]*TaskStatus{}}})
	ctx := context.Background()

	s1 := &session{id: 1, updates: make(chan string, 8)}
	sctx, cancel := context.WithCancel(ctx)
	w.Listen(sctx, s1)
	w.Assign(ctx, []*Task{{ID: "task1", DesiredState: "RUNNING"}})
	fmt.Println(<-s1.updates)

	cancel() // session to the manager broke; the agent opens a new one
	time.Sleep(50 * time.Millisecond)

	s2 := &session{id: 2, updates: make(chan string, 8)}
	w.Listen(ctx, s2)
	w.Assign(ctx, []*Task{{ID: "task1", DesiredState: "SHUTDOWN"}})
	fmt.Println(<-s2.updates)
}
