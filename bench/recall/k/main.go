package main

import (
	"sync"
	"time"
)

type queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
	stats sync.RWMutex
	n     int
}

func newQueue() *queue {
	q := &queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) pop() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	it := q.items[0]
	q.items = q.items[1:]
	return it
}

func (q *queue) push(v int) {
	q.stats.RLock()
	defer q.stats.RUnlock()
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *queue) worker() {
	q.stats.RLock()
	defer q.stats.RUnlock()
	q.pop()
}

func (q *queue) reset() {
	q.stats.Lock()
	q.n = 0
	q.stats.Unlock()
}

func main() {
	q := newQueue()
	go q.worker()
	go func() {
		for {
			q.reset()
			time.Sleep(time.Millisecond)
		}
	}()
	q.push(1)
}
