// Package pools: functions whose func-typed parameter runs on another
// goroutine get a spawns suggestion; synchronous callers of theirs do not.
package pools

import (
	"sync"
	"time"
)

type Pool struct{ jobs chan func() }

func NewPool(n int) *Pool {
	p := &Pool{jobs: make(chan func())}
	for i := 0; i < n; i++ {
		go p.worker()
	}
	return p
}

func (p *Pool) worker() {
	for f := range p.jobs {
		f()
	}
}

func (p *Pool) Submit(f func()) { p.jobs <- f } // want `Pool.Submit: add //confined:spawns f \(rank \d of \d\): f is sent on p.jobs, whose values Pool.worker calls on the goroutine started by the go statement`

func Go(f func()) { go f() } // want `Go: add //confined:spawns f \(rank \d of \d\): f is started by a go statement`

func After(d time.Duration, f func()) { time.AfterFunc(d, f) } // want `After: add //confined:spawns f \(rank \d of \d\): f is handed to time.AfterFunc`

// Delegate hands f on to Go.
func Delegate(f func()) { Go(f) } // want `Delegate: add //confined:spawns f \(rank \d of \d\): f is handed to Go, where it is started by a go statement`

// Each calls f on its caller's goroutine.
func Each(xs []int, f func(int)) {
	for _, x := range xs {
		f(x)
	}
}

// Hooks keeps callbacks that its own goroutine runs.
type Hooks struct {
	mu     sync.Mutex
	onStop []func() // want `Hooks.onStop: add //confined:guardedby mu \(rank \d of \d\): mu is held at 2 of 2 accesses`
}

func (h *Hooks) OnStop(f func()) { // want `Hooks.OnStop: add //confined:spawns f \(rank \d of \d\): f is stored in h.onStop, whose values Hooks.run calls on the goroutine started by the go statement`
	h.mu.Lock()
	h.onStop = append(h.onStop, f)
	h.mu.Unlock()
}

func (h *Hooks) Start(stop chan struct{}) { go h.run(stop) }

func (h *Hooks) run(stop chan struct{}) {
	<-stop
	h.mu.Lock()
	fs := append([]func(){}, h.onStop...)
	h.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

type job struct{ fn func() }

// Queue wraps each function in a job for its loop.
type Queue struct{ ch chan *job }

func NewQueue() *Queue {
	q := &Queue{ch: make(chan *job)}
	go q.loop()
	return q
}

func (q *Queue) loop() {
	for j := range q.ch {
		j.fn()
	}
}

func (q *Queue) Post(f func()) { q.ch <- &job{fn: f} } // want `Queue.Post: add //confined:spawns f \(rank \d of \d\): f is stored in job.fn, whose values Queue.loop calls on the goroutine started by the go statement`
