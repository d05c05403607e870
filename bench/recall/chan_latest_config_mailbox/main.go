// Pattern: "latest value wins" capacity-1 mailbox, as used for resolver /
// balancer state pushes in grpc-go's balancer wrappers and for config
// reloads in many Kubernetes-style controllers: the updater, holding the
// config write lock, throws away any stale pending update and pushes the
// newest one; the reconciler goroutine receives updates and checks them
// against the current generation under the read lock.
//
// Why it is safe: every send happens under the write lock, right after a
// non-blocking drain of the 1-slot buffer. No other sender can run in
// between (they need the same lock) and the receiver can only remove
// elements, so the send always finds an empty slot.
package main

import (
	"fmt"
	"sync"
	"time"
)

const mailboxSize = 1

type config struct {
	generation int
	replicas   int
}

type configStore struct {
	mu      sync.RWMutex
	current config
	closed  bool
	updates chan config
}

func (s *configStore) Update(replicas int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.current = config{generation: s.current.generation + 1, replicas: replicas}
	select { // discard a stale, not yet consumed update
	case <-s.updates:
	default:
	}
	s.updates <- s.current
}

func (s *configStore) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	close(s.updates)
}

func (s *configStore) reconcile(done chan<- struct{}) {
	defer close(done)
	applied, skipped := 0, 0
	var last config
	for cfg := range s.updates {
		s.mu.RLock()
		stale := cfg.generation < s.current.generation
		s.mu.RUnlock()
		if stale {
			skipped++
			continue
		}
		time.Sleep(100 * time.Microsecond) // scale the deployment
		last = cfg
		applied++
	}
	fmt.Printf("reconciler: applied=%d skipped=%d final generation=%d replicas=%d\n",
		applied, skipped, last.generation, last.replicas)
}

func main() {
	s := &configStore{updates: make(chan config, mailboxSize)}
	done := make(chan struct{})
	go s.reconcile(done)

	var wg sync.WaitGroup
	for u := 0; u < 3; u++ {
		wg.Add(1)
		go func(u int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				s.Update(u*100 + i)
			}
		}(u)
	}
	wg.Wait()
	s.Close()
	<-done
}
