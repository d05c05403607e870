// Command condwaitmain: in package main an exported method has no callers
// outside the package, so only the goroutines the program starts can
// signal the queue.
package main

import "sync"

type Queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
}

func NewQueue() *Queue {
	q := &Queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *Queue) Pop() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	v := q.items[0]
	q.items = q.items[1:]
	return v
}

func (q *Queue) Push(v int) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.cond.Signal()
}

type Registry struct {
	mu    sync.RWMutex
	names map[int]string
	queue *Queue
}

// Worker holds the read lock while Pop waits: the producer's RLock queues
// behind Register's Lock, which waits for Worker's RUnlock.
func (r *Registry) Worker() {
	for {
		r.mu.RLock()
		id := r.queue.Pop() // want `Registry.mu \(taken at main.go:\d+\) is held across a Cond.Wait \(in Queue.Pop at main.go:\d+\); the goroutine started by the go statement, which would unblock it, also takes Registry.mu \(read-locked, but Registry.Register write-locks it: a waiting writer makes every later RLock wait\) \[blocking-held\]`
		_ = r.names[id]
		r.mu.RUnlock()
	}
}

func (r *Registry) Produce() {
	for id := 0; ; id++ {
		r.mu.RLock()
		_, known := r.names[id]
		r.mu.RUnlock()
		if known {
			r.queue.Push(id)
		}
	}
}

func (r *Registry) Register(id int, name string) {
	r.mu.Lock()
	r.names[id] = name
	r.mu.Unlock()
}

// Drain pops before it read-locks. Silent.
func (r *Registry) Drain() string {
	id := r.queue.Pop()
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.names[id]
}

func main() {
	r := &Registry{names: map[int]string{}, queue: NewQueue()}
	go r.Worker()
	go r.Produce()
	r.Register(1, "a")
	_ = r.Drain()
}
