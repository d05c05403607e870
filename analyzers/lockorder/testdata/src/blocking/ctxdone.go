package blocking

import (
	"context"
	"sync"
)

// A dispatcher hands work to waiting runners under its lock (drone's
// build queue). A runner registers, waits for a stage, and on giving up
// takes the lock to deregister.
type Queue struct {
	mu      sync.Mutex
	runners map[*runner]bool
}

type runner struct {
	ch   chan string
	done <-chan struct{}
}

// Handing over by a plain send: a runner that gave up never receives,
// and deregisters under the lock the dispatcher holds.
func (q *Queue) dispatch(stage string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for r := range q.runners {
		r.ch <- stage // want `Queue.mu \(taken at ctxdone.go:\d+\) is held across a channel send; the goroutine started by the go statement, which would unblock it, also takes Queue.mu \[blocking-held\]`
		delete(q.runners, r)
		return
	}
}

// The send as a select with the runner's context: the runner giving up
// ends the wait, whoever cancels it. Silent.
func (q *Queue) dispatchOrDone(stage string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for r := range q.runners {
		select {
		case r.ch <- stage:
		case <-r.done:
		}
		delete(q.runners, r)
		return
	}
}

// The same with the context itself. Silent.
func (q *Queue) dispatchCtx(ctx context.Context, stage string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for r := range q.runners {
		select {
		case r.ch <- stage:
		case <-ctx.Done():
		}
		delete(q.runners, r)
		return
	}
}

func (q *Queue) request(ctx context.Context) string {
	r := &runner{ch: make(chan string), done: ctx.Done()}
	q.mu.Lock()
	q.runners[r] = true
	q.mu.Unlock()
	select {
	case s := <-r.ch:
		return s
	case <-ctx.Done():
		q.mu.Lock()
		delete(q.runners, r)
		q.mu.Unlock()
		return ""
	}
}

func StartQueue(ctx context.Context) *Queue {
	q := &Queue{runners: map[*runner]bool{}}
	go q.request(ctx)
	go q.dispatch("a")
	go q.dispatchOrDone("b")
	go q.dispatchCtx(ctx, "c")
	return q
}
