package main

import "sync"

// A processing function kept in a config field (client-go's
// Config.Process, of the named type ProcessFunc) and passed to the
// queue's Pop, which calls it under the queue's lock. The function
// reaches the queue through what its maker captured, which Pop cannot
// name; the program makes one queue, so it is the lock Pop holds.

type ProcessFunc func(item string) error

type fifo struct {
	lock  sync.Mutex
	items []string
	count int
}

func (f *fifo) Synced() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.count == 0
}

func (f *fifo) Pop(process ProcessFunc) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	item := f.items[0]
	f.items = f.items[1:]
	f.count--
	return process(item)
}

type queueConfig struct {
	Queue   *fifo
	Process ProcessFunc
}

type controller struct{ config queueConfig }

func (c *controller) processOne() error {
	return c.config.Queue.Pop(c.config.Process) // want `fifo.lock locked again by fifo.Pop -> runFIFO.func1 -> fifo.Synced \(at passedfield.go:\d+\), the same lock: the program makes one fifo \(at passedfield.go:\d+\), while held since passedfield.go:\d+: self-deadlock \[double-lock\]`
}

// Two queues, each processed by a function that asks the other: the
// locks are two objects' (nothing reported).
type pairedController struct {
	Queue   *fifo2
	Process func(string) error
}

type fifo2 struct {
	lock  sync.Mutex
	items []string
}

func (f *fifo2) Len() int {
	f.lock.Lock()
	defer f.lock.Unlock()
	return len(f.items)
}

func (f *fifo2) Pop(process func(string) error) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	return process(f.items[0])
}

func (c *pairedController) processOne() error { return c.Queue.Pop(c.Process) }

func runFIFO() {
	q := &fifo{items: []string{"a"}, count: 1}
	c := &controller{config: queueConfig{Queue: q, Process: func(item string) error {
		q.Synced()
		return nil
	}}}
	_ = c.processOne()

	q1, q2 := &fifo2{items: []string{"a"}}, &fifo2{items: []string{"b"}}
	c1 := &pairedController{Queue: q1, Process: func(string) error { q2.Len(); return nil }}
	c2 := &pairedController{Queue: q2, Process: func(string) error { q1.Len(); return nil }}
	_ = c1.processOne()
	_ = c2.processOne()
}
