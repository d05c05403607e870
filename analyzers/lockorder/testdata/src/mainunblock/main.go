// Package main: the main goroutine of a program is a goroutine like the
// ones it starts: a worker waiting under a lock that main must take to
// wake it never wakes.
package main

import (
	"sync"
	"time"
)

type Queue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	items  []int
	gate   sync.RWMutex
	resets int
}

func NewQueue() *Queue {
	q := &Queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *Queue) pop() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	it := q.items[0]
	q.items = q.items[1:]
	return it
}

// push read-locks the gate; with reset's writer queued, it waits behind
// the worker's read lock, and the worker waits for push.
func (q *Queue) push(v int) {
	q.gate.RLock()
	defer q.gate.RUnlock()
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *Queue) worker() {
	q.gate.RLock()
	defer q.gate.RUnlock()
	q.pop() // want `Queue.gate \(taken at main.go:\d+\) is held across a Cond.Wait \(in Queue.pop at main.go:\d+\); the main goroutine, which would unblock it, also takes Queue.gate \(read-locked, but Queue.reset write-locks it`
}

func (q *Queue) reset() {
	q.gate.Lock()
	q.resets++
	q.gate.Unlock()
}

// Counter's worker waits for main without holding anything main takes.
// Silent.
type Counter struct {
	mu   sync.Mutex
	n    int
	done chan struct{}
}

func (c *Counter) worker() {
	<-c.done
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func main() {
	q := NewQueue()
	go q.worker()
	go func() {
		for {
			q.reset()
			time.Sleep(time.Millisecond)
		}
	}()
	q.push(1)

	c := &Counter{done: make(chan struct{})}
	go c.worker()
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	close(c.done)
}
