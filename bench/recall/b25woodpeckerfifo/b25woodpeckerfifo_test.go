// Project: woodpecker-ci/woodpecker
// Bug: fifo.finished held the queue mutex and, for a task that was still pending rather than running, called the public q.Evict to drop it, which locks the same (non-reentrant) mutex again; ErrorAtOnce on a pipeline with queued steps hangs the server.
// Fix: finished removes pending tasks with the unlocked removeFromPending helper while it holds the lock.
package b25woodpeckerfifo

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

var ErrNotFound = errors.New("queue: task not found")

type StatusValue string

const (
	StatusSuccess StatusValue = "success"
	StatusFailure StatusValue = "failure"
	StatusSkipped StatusValue = "skipped"
)

type Task struct {
	ID           string
	Dependencies []string
	DepStatus    map[string]StatusValue
	Labels       map[string]string
}

type FilterFn func(*Task) (bool, int)

type entry struct {
	item     *Task
	done     chan bool
	error    error
	deadline time.Time
}

type worker struct {
	agentID int64
	filter  FilterFn
	channel chan *Task
}

type InfoT struct {
	Pending     int
	WaitingDeps int
	Running     int
	Workers     int
}

func (i InfoT) String() string {
	return fmt.Sprintf("pending=%d waiting=%d running=%d workers=%d", i.Pending, i.WaitingDeps, i.Running, i.Workers)
}

type fifo struct {
	sync.Mutex
	ctx           context.Context
	workers       map[*worker]struct{}
	running       map[string]*entry
	pending       *list.List
	waitingOnDeps *list.List
	extension     time.Duration
	paused        bool
}

func NewMemoryQueue(ctx context.Context) *fifo {
	return &fifo{
		ctx:           ctx,
		workers:       map[*worker]struct{}{},
		running:       map[string]*entry{},
		pending:       list.New(),
		waitingOnDeps: list.New(),
		extension:     10 * time.Second,
	}
}

func (q *fifo) PushAtOnce(_ context.Context, tasks []*Task) error {
	q.Lock()
	for _, task := range tasks {
		q.pending.PushBack(task)
	}
	q.Unlock()
	go q.process()
	return nil
}

func (q *fifo) Poll(ctx context.Context, agentID int64, f FilterFn) (*Task, error) {
	q.Lock()
	w := &worker{agentID: agentID, channel: make(chan *Task, 1), filter: f}
	q.workers[w] = struct{}{}
	q.Unlock()
	go q.process()
	select {
	case <-ctx.Done():
		q.Lock()
		delete(q.workers, w)
		q.Unlock()
		return nil, ctx.Err()
	case t := <-w.channel:
		return t, nil
	}
}

func (q *fifo) process() {
	q.Lock()
	defer q.Unlock()
	if q.paused {
		return
	}
	for w := range q.workers {
		for e := q.pending.Front(); e != nil; e = e.Next() {
			task := e.Value.(*Task)
			if ok, _ := w.filter(task); !ok {
				continue
			}
			q.pending.Remove(e)
			delete(q.workers, w)
			q.running[task.ID] = &entry{item: task, done: make(chan bool), deadline: time.Now().Add(q.extension)}
			w.channel <- task
			break
		}
	}
}

func (q *fifo) Done(_ context.Context, id string, exitStatus StatusValue) error {
	return q.finished([]string{id}, exitStatus, nil)
}

func (q *fifo) Error(_ context.Context, id string, err error) error {
	return q.finished([]string{id}, StatusFailure, err)
}

func (q *fifo) ErrorAtOnce(_ context.Context, ids []string, err error) error {
	return q.finished(ids, StatusFailure, err)
}

func (q *fifo) finished(ids []string, exitStatus StatusValue, err error) error {
	q.Lock()
	for _, id := range ids {
		taskEntry, ok := q.running[id]
		if ok {
			taskEntry.error = err
			close(taskEntry.done)
			delete(q.running, id)
		} else {
			_ = q.Evict(q.ctx, id)
		}
		q.updateDepStatusInQueue(id, exitStatus)
	}
	q.Unlock()
	return nil
}

func (q *fifo) Evict(_ context.Context, id string) error {
	q.Lock()
	defer q.Unlock()
	if !q.removeFromPending(id) {
		return ErrNotFound
	}
	return nil
}

func (q *fifo) removeFromPending(id string) bool {
	for e := q.pending.Front(); e != nil; e = e.Next() {
		if e.Value.(*Task).ID == id {
			q.pending.Remove(e)
			return true
		}
	}
	return false
}

func (q *fifo) updateDepStatusInQueue(id string, status StatusValue) {
	for e := q.pending.Front(); e != nil; e = e.Next() {
		task := e.Value.(*Task)
		for _, dep := range task.Dependencies {
			if dep == id {
				task.DepStatus[dep] = status
			}
		}
	}
}

func (q *fifo) Info(_ context.Context) InfoT {
	q.Lock()
	defer q.Unlock()
	return InfoT{Pending: q.pending.Len(), WaitingDeps: q.waitingOnDeps.Len(), Running: len(q.running), Workers: len(q.workers)}
}

func TestProbe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := NewMemoryQueue(ctx)
	build := &Task{ID: "1", Labels: map[string]string{"platform": "linux/amd64"}}
	deploy := &Task{ID: "2", Dependencies: []string{"1"}, DepStatus: map[string]StatusValue{}, Labels: map[string]string{"platform": "linux/arm64"}}
	if err := q.PushAtOnce(ctx, []*Task{build, deploy}); err != nil {
		t.Fatal(err)
	}
	got, err := q.Poll(ctx, 7, func(t *Task) (bool, int) { return t.Labels["platform"] == "linux/amd64", 0 })
	if err != nil || got.ID != "1" {
		t.Fatalf("poll: %v %v", got, err)
	}
	if err := q.ErrorAtOnce(ctx, []string{"1", "2"}, errors.New("pipeline canceled")); err != nil {
		t.Fatal(err)
	}
	if info := q.Info(ctx); info.Pending != 0 || info.Running != 0 {
		t.Fatalf("queue not drained: %s", info)
	}
}
