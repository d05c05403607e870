// Modelled on tidb util/workerpool and the DDL/backfill task queues: workers
// pop one task at a time from a mutex-protected queue (lock per pop), run the
// task with no lock held, and park on a wake-up channel when the queue is
// empty. Producers push under the lock and do a non-blocking notify; workers
// always re-check the queue before parking, so no wake-up is lost.
package main

import (
	"fmt"
	"sync"
)

type task struct {
	id   int
	rows int
}

type workerPool struct {
	mu      sync.Mutex
	queue   []task
	closed  bool
	notify  chan struct{} // capacity 1
	quit    chan struct{}
	wg      sync.WaitGroup
	resMu   sync.Mutex
	results map[int]int
}

func newWorkerPool(n int) *workerPool {
	p := &workerPool{notify: make(chan struct{}, 1), quit: make(chan struct{}), results: make(map[int]int)}
	for i := 0; i < n; i++ {
		p.wg.Add(1)
		go p.worker()
	}
	return p
}

func (p *workerPool) push(t task) bool {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	p.queue = append(p.queue, t)
	p.mu.Unlock()
	select {
	case p.notify <- struct{}{}:
	default:
	}
	return true
}

// pop takes and releases p.mu on every call.
func (p *workerPool) pop() (task, bool, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return task{}, false, p.closed
	}
	t := p.queue[0]
	p.queue = p.queue[1:]
	return t, true, false
}

func (p *workerPool) worker() {
	defer p.wg.Done()
	for {
		t, ok, closed := p.pop()
		if closed {
			return
		}
		if !ok {
			select {
			case <-p.notify:
			case <-p.quit:
			}
			continue
		}
		p.handle(t)
	}
}

func (p *workerPool) handle(t task) {
	sum := 0
	for i := 0; i < t.rows; i++ {
		sum += i
	}
	p.resMu.Lock()
	p.results[t.id] = sum
	p.resMu.Unlock()
}

// close lets workers drain the remaining queue, then exit.
func (p *workerPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	close(p.quit)
	p.wg.Wait()
}

func main() {
	p := newWorkerPool(3)
	var prod sync.WaitGroup
	for g := 0; g < 2; g++ {
		prod.Add(1)
		go func(g int) {
			defer prod.Done()
			for i := 0; i < 20; i++ {
				p.push(task{id: g*100 + i, rows: i * 10})
			}
		}(g)
	}
	prod.Wait()
	p.close()
	p.resMu.Lock()
	fmt.Println("completed tasks:", len(p.results))
	p.resMu.Unlock()
}
