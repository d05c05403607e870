// Pattern: kubernetes client-go tools/cache sharedProcessor/processorListener:
// distribute() holds the processor lock while it adds a notification to
// every listener's addCh. Each listener runs two goroutines: pop() always
// keeps receiving from addCh and parks notifications in an unbounded
// pending buffer, and run() delivers them to the handler, which takes the
// processor lock. Because pop() never blocks on anything but its select
// (which always includes addCh), a distribute() stuck on a full addCh is
// always drained, even while run() is waiting for the lock.
package main

import (
	"fmt"
	"sync"
)

const addChSize = 16

type notification struct {
	kind string
	key  string
}

type processorListener struct {
	addCh   chan notification
	nextCh  chan notification
	pending []notification
	handle  func(notification)
}

func (p *processorListener) pop() {
	defer close(p.nextCh)
	var nextCh chan<- notification // nil disables the send case
	var next notification
	addCh := p.addCh
	for {
		select {
		case nextCh <- next:
			if len(p.pending) == 0 {
				nextCh = nil
				if addCh == nil {
					return
				}
				continue
			}
			next, p.pending = p.pending[0], p.pending[1:]
		case n, ok := <-addCh:
			if !ok {
				addCh = nil
				if nextCh == nil {
					return
				}
				continue
			}
			if nextCh == nil {
				next, nextCh = n, p.nextCh
			} else {
				p.pending = append(p.pending, n)
			}
		}
	}
}

func (p *processorListener) run(wg *sync.WaitGroup) {
	defer wg.Done()
	for n := range p.nextCh {
		p.handle(n)
	}
}

type sharedProcessor struct {
	mu        sync.Mutex
	listeners []*processorListener
	handled   map[string]int // per-kind counts, updated by handlers
}

func (s *sharedProcessor) addListener(wg *sync.WaitGroup) {
	l := &processorListener{addCh: make(chan notification, addChSize), nextCh: make(chan notification)}
	l.handle = func(n notification) {
		s.mu.Lock()
		s.handled[n.kind]++
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	wg.Add(2)
	go func() { defer wg.Done(); l.pop() }()
	go l.run(wg)
}

func (s *sharedProcessor) distribute(n notification) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		l.addCh <- n
	}
}

func (s *sharedProcessor) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		close(l.addCh)
	}
}

func main() {
	s := &sharedProcessor{handled: make(map[string]int)}
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		s.addListener(&wg)
	}

	var informers sync.WaitGroup
	for _, kind := range []string{"Pod", "Node", "ConfigMap"} {
		informers.Add(1)
		go func(kind string) {
			defer informers.Done()
			for i := 0; i < 1000; i++ {
				s.distribute(notification{kind: kind, key: fmt.Sprintf("ns/%s-%d", kind, i)})
			}
		}(kind)
	}
	informers.Wait()
	s.stop()
	wg.Wait()

	s.mu.Lock()
	fmt.Println("handled:", s.handled)
	s.mu.Unlock()
}
