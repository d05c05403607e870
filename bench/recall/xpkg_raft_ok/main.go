// raft_ok: modeled on hashicorp/raft observers (raft.NewObserver with a
// channel and Blocking=false). Raft calls Observe with Raft.mu held, and
// tracker.check holds tracker.mu while calling Raft.Leader (tracker.mu ->
// Raft.mu). Correct: Observe does only a non-blocking send on a buffered
// channel; tracker.mu is taken by a separate goroutine that never calls Raft.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/xpkg_raft_ok/raft"
)

type tracker struct {
	mu      sync.Mutex
	r       *raft.Raft
	ch      chan raft.Observation
	history []string
}

// Observe implements raft.Observer; drops the observation if the buffer is full.
func (t *tracker) Observe(o raft.Observation) {
	select {
	case t.ch <- o:
	default:
	}
}

func (t *tracker) run(done chan<- struct{}) {
	for o := range t.ch {
		t.mu.Lock()
		t.history = append(t.history, o.Leader)
		t.mu.Unlock()
	}
	close(done)
}

func (t *tracker) check() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	leader, term := t.r.Leader()
	return fmt.Sprintf("%s@%d after %d changes", leader, term, len(t.history))
}

func main() {
	t := &tracker{r: &raft.Raft{}, ch: make(chan raft.Observation, 16)}
	t.r.RegisterObserver(t)
	done := make(chan struct{})
	go t.run(done)
	var wg sync.WaitGroup
	for _, n := range []string{"a", "b", "c"} {
		wg.Add(2)
		go func() { defer wg.Done(); t.r.SetLeader(n) }()
		go func() { defer wg.Done(); fmt.Println(t.check()) }()
	}
	wg.Wait()
	close(t.ch)
	<-done
}
