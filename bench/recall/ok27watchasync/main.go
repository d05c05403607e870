package main

import (
	"fmt"
	"sync"
)

type notification struct {
	cb  func(string)
	val string
}

// Notifier delivers watch callbacks on its own goroutine. Callers enqueue
// into an unbounded slice and never block, so a callback that takes the
// caller's lock simply runs after the caller has released it.
type Notifier struct {
	mu       sync.Mutex
	values   map[string]string
	watchers map[string][]func(string)
	pending  []notification
	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
}

func NewNotifier() *Notifier {
	n := &Notifier{
		values:   map[string]string{},
		watchers: map[string][]func(string){},
		wake:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go n.loop()
	return n
}

func (n *Notifier) enqueueLocked(cb func(string), v string) {
	n.pending = append(n.pending, notification{cb, v})
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *Notifier) Watch(name string, cb func(string)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.watchers[name] = append(n.watchers[name], cb)
	if v, ok := n.values[name]; ok {
		n.enqueueLocked(cb, v)
	}
}

func (n *Notifier) Set(name, v string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.values[name] = v
	for _, cb := range n.watchers[name] {
		n.enqueueLocked(cb, v)
	}
}

func (n *Notifier) drain() {
	n.mu.Lock()
	batch := n.pending
	n.pending = nil
	n.mu.Unlock()
	for _, x := range batch {
		x.cb(x.val)
	}
}

func (n *Notifier) loop() {
	defer close(n.done)
	for {
		select {
		case <-n.wake:
			n.drain()
		case <-n.quit:
			n.drain()
			return
		}
	}
}

func (n *Notifier) Close() { close(n.quit); <-n.done }

// Balancer reconfigures itself when its config key changes.
type Balancer struct {
	mu      sync.Mutex
	weights string
	updates int
}

func (b *Balancer) onConfig(v string) {
	b.mu.Lock()
	b.weights = v
	b.updates++
	b.mu.Unlock()
}

func (b *Balancer) Attach(n *Notifier) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.weights = "default"
	n.Watch("lb/weights", b.onConfig) // may enqueue; callback runs later
}

func main() {
	n := NewNotifier()
	n.Set("lb/weights", "a=1,b=1")
	b := &Balancer{}
	b.Attach(n)
	for i := 2; i <= 4; i++ {
		n.Set("lb/weights", fmt.Sprintf("a=%d,b=1", i))
	}
	n.Close()
	b.mu.Lock()
	fmt.Println("weights:", b.weights, "updates:", b.updates)
	b.mu.Unlock()
}
