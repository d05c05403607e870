// Command b70nomadevalsetter reproduces a self-deadlock modelled on
// HashiCorp Nomad's server-side evaluation plumbing (nomad/eval_broker.go
// and nomad/worker.go), no specific upstream bug.
//
// An evalQueue holds ready evaluations and hands each one to a delivery
// handler that is installed through the SetHandler setter. The worker's
// constructor NewWorker installs its own method value w.invokeScheduler as
// that handler. Enqueue takes the queue lock q.l and, through
// dispatchLocked, calls the installed handler while q.l is still held. The
// worker's handler checks back-pressure before scheduling by calling
// backoffIfOverloaded, which asks the queue for its Stats, and Stats takes
// q.l again. sync.Mutex is not reentrant, so the only goroutine blocks on a
// mutex it already owns.
//
// The fix collects the deliverable evaluations under the lock and invokes
// the handler only after q.l has been released.
package main

import (
	"fmt"
	"sync"
)

type Evaluation struct {
	ID          string
	Namespace   string
	JobID       string
	Type        string
	Priority    int
	TriggeredBy string
	ModifyIndex uint64
}

// EvalHandler is invoked for every evaluation leaving the ready queue.
type EvalHandler func(ev *Evaluation) error

type QueueStats struct {
	TotalReady    int
	TotalInflight int
	ByScheduler   map[string]int
}

type evalQueue struct {
	l        sync.Mutex
	enabled  bool
	ready    []*Evaluation
	inflight map[string]*Evaluation
	stats    QueueStats
	handler  EvalHandler
}

func newEvalQueue() *evalQueue {
	return &evalQueue{
		enabled:  true,
		inflight: make(map[string]*Evaluation),
		stats:    QueueStats{ByScheduler: make(map[string]int)},
	}
}

// SetHandler installs the function that receives dequeued evaluations.
func (q *evalQueue) SetHandler(h EvalHandler) {
	q.handler = h
}

func (q *evalQueue) Enqueue(ev *Evaluation) {
	q.l.Lock()
	defer q.l.Unlock()
	if !q.enabled {
		return
	}
	q.ready = append(q.ready, ev)
	q.stats.TotalReady++
	q.stats.ByScheduler[ev.Type]++
	q.dispatchLocked()
}

func (q *evalQueue) dispatchLocked() {
	for len(q.ready) > 0 && q.handler != nil {
		ev := q.ready[0]
		q.ready = q.ready[1:]
		q.stats.TotalReady--
		q.stats.ByScheduler[ev.Type]--
		q.inflight[ev.ID] = ev
		q.stats.TotalInflight++
		if err := q.handler(ev); err != nil {
			fmt.Printf("eval %s: %v\n", ev.ID, err)
		}
	}
}

func (q *evalQueue) Ack(evalID string) {
	q.l.Lock()
	defer q.l.Unlock()
	if _, ok := q.inflight[evalID]; ok {
		delete(q.inflight, evalID)
		q.stats.TotalInflight--
	}
}

func (q *evalQueue) Stats() QueueStats {
	q.l.Lock()
	defer q.l.Unlock()
	out := QueueStats{
		TotalReady:    q.stats.TotalReady,
		TotalInflight: q.stats.TotalInflight,
		ByScheduler:   make(map[string]int, len(q.stats.ByScheduler)),
	}
	for k, v := range q.stats.ByScheduler {
		out.ByScheduler[k] = v
	}
	return out
}

type Worker struct {
	id          string
	queue       *evalQueue
	maxInflight int
	processed   int
	lastIndex   uint64
}

func NewWorker(id string, q *evalQueue) *Worker {
	w := &Worker{id: id, queue: q, maxInflight: 8}
	q.SetHandler(w.invokeScheduler)
	return w
}

func (w *Worker) invokeScheduler(ev *Evaluation) error {
	if err := w.backoffIfOverloaded(ev); err != nil {
		return err
	}
	if ev.ModifyIndex > w.lastIndex {
		w.lastIndex = ev.ModifyIndex
	}
	w.processed++
	w.queue.Ack(ev.ID)
	return nil
}

func (w *Worker) backoffIfOverloaded(ev *Evaluation) error {
	stats := w.queue.Stats()
	if stats.TotalInflight > w.maxInflight {
		return fmt.Errorf("worker %s overloaded (%d in flight), requeue %s",
			w.id, stats.TotalInflight, ev.ID)
	}
	return nil
}

func main() {
	q := newEvalQueue()
	w := NewWorker("worker-0", q)
	for i := 1; i <= 3; i++ {
		q.Enqueue(&Evaluation{
			ID:          fmt.Sprintf("eval-%d", i),
			Namespace:   "default",
			JobID:       "web",
			Type:        "service",
			Priority:    50,
			TriggeredBy: "job-register",
			ModifyIndex: uint64(100 + i),
		})
	}
	fmt.Printf("processed=%d lastIndex=%d stats=%+v\n", w.processed, w.lastIndex, q.Stats())
}
