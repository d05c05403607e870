// Pattern: Kubernetes client-go tools/cache sharedIndexInformer + processorListener:
// distribute() calls listener.add(), a plain send on addCh, while holding the
// informer lock; a per-listener pop() goroutine that takes no locks always
// accepts from addCh (buffering into pendingNotifications) and hands items to
// run() via nextCh. Handlers in run() may therefore lock the informer.
package main

import (
	"fmt"
	"sort"
	"sync"
)

type notification struct {
	kind string
	key  string
}

type processorListener struct {
	addCh   chan notification
	nextCh  chan notification
	handler func(notification)
}

func newListener(h func(notification)) *processorListener {
	return &processorListener{addCh: make(chan notification), nextCh: make(chan notification), handler: h}
}

func (p *processorListener) add(n notification) { p.addCh <- n }

func (p *processorListener) pop() {
	defer close(p.nextCh)
	var pending []notification
	addCh := p.addCh
	for addCh != nil || len(pending) > 0 {
		var out chan<- notification
		var head notification
		if len(pending) > 0 {
			out, head = p.nextCh, pending[0]
		}
		select {
		case out <- head:
			pending = pending[1:]
		case n, ok := <-addCh:
			if !ok {
				addCh = nil
				continue
			}
			pending = append(pending, n)
		}
	}
}

func (p *processorListener) run() {
	for n := range p.nextCh {
		p.handler(n)
	}
}

type Informer struct {
	mu        sync.Mutex
	store     map[string]int
	listeners []*processorListener
	wg        sync.WaitGroup
}

func (s *Informer) AddEventHandler(h func(notification)) {
	l := newListener(h)
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	s.wg.Add(2)
	go func() { defer s.wg.Done(); l.pop() }()
	go func() { defer s.wg.Done(); l.run() }()
}

// HandleDeltas updates the store and distributes under the same lock.
func (s *Informer) HandleDeltas(kind, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if kind == "delete" {
		delete(s.store, key)
	} else {
		s.store[key]++
	}
	for _, l := range s.listeners {
		l.add(notification{kind: kind, key: key})
	}
}

func (s *Informer) GetByKey(key string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.store[key]
	return v, ok
}

func (s *Informer) Stop() {
	s.mu.Lock()
	for _, l := range s.listeners {
		close(l.addCh)
	}
	s.listeners = nil
	s.mu.Unlock()
	s.wg.Wait()
}

func main() {
	inf := &Informer{store: map[string]int{}}
	var seenMu sync.Mutex
	seen := map[string]int{}
	for i := 0; i < 3; i++ {
		inf.AddEventHandler(func(n notification) {
			_, exists := inf.GetByKey(n.key) // handler locks the informer
			seenMu.Lock()
			seen[fmt.Sprintf("%s/%v", n.kind, exists || n.kind == "delete")]++
			seenMu.Unlock()
		})
	}
	for i := 0; i < 30; i++ {
		key := fmt.Sprintf("default/pod-%d", i%5)
		kind := []string{"add", "update", "delete"}[i%3]
		inf.HandleDeltas(kind, key)
	}
	inf.Stop()
	var keys []string
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Println(k, seen[k])
	}
}
