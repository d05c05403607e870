// Style: like a hashicorp nomad alloc runner / task group shutdown. Stop holds
// r.mu while waiting for the task goroutines; that is safe because the tasks
// never touch r.mu (they report through an atomic and their own statsMu).
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type taskRunner struct {
	mu      sync.Mutex // guards stopped and lifecycle transitions
	stopped bool
	stopCh  chan struct{}
	wg      sync.WaitGroup

	ticks   atomic.Int64
	statsMu sync.Mutex
	stats   map[string]int
}

func newTaskRunner() *taskRunner {
	return &taskRunner{stopCh: make(chan struct{}), stats: map[string]int{}}
}

func (r *taskRunner) Start(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		r.wg.Add(1)
		go r.runTask(n)
	}
}

func (r *taskRunner) runTask(name string) {
	defer r.wg.Done()
	t := time.NewTicker(500 * time.Microsecond)
	defer t.Stop()
	for {
		select {
		case <-r.stopCh:
			return
		case <-t.C:
			r.ticks.Add(1)
			r.statsMu.Lock()
			r.stats[name]++
			r.statsMu.Unlock()
		}
	}
}

// Stop is idempotent; it holds r.mu for the whole shutdown so a concurrent
// Stop or Start cannot interleave with it.
func (r *taskRunner) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.stopped = true
	close(r.stopCh)
	r.wg.Wait()
}

func main() {
	r := newTaskRunner()
	r.Start("web", "sidecar", "logshipper")
	time.Sleep(10 * time.Millisecond)
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Stop()
		}()
	}
	wg.Wait()
	r.statsMu.Lock()
	fmt.Println("tasks:", len(r.stats), "ticks>0:", r.ticks.Load() > 0)
	r.statsMu.Unlock()
}
