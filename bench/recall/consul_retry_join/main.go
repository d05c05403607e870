// Modelled on consul agent/retry_join.go and lib/retry: a retry loop that,
// on every attempt, takes the agent's state lock only long enough to read the
// member list and record the outcome. The (simulated) network join runs with
// no lock held, and the loop backs off between attempts.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type retryJoiner struct {
	mu        sync.Mutex
	addrs     []string
	joined    map[string]bool
	attempts  int
	lastErr   error
	maxTries  int
	interval  time.Duration
	failUntil int // simulated: first N attempts fail
}

func (r *retryJoiner) pendingAddrs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, a := range r.addrs {
		if !r.joined[a] {
			out = append(out, a)
		}
	}
	return out
}

// join simulates the serf join; no locks held by the caller.
func (r *retryJoiner) join(addrs []string, attempt int) (int, error) {
	if attempt < r.failUntil {
		return 0, errors.New("dial tcp: connection refused")
	}
	return len(addrs), nil
}

func (r *retryJoiner) recordAttempt(addrs []string, n int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts++
	r.lastErr = err
	for i := 0; i < n && i < len(addrs); i++ {
		r.joined[addrs[i]] = true
	}
}

func (r *retryJoiner) retryJoin() error {
	for attempt := 0; attempt < r.maxTries; attempt++ {
		addrs := r.pendingAddrs()
		if len(addrs) == 0 {
			return nil
		}
		n, err := r.join(addrs, attempt)
		r.recordAttempt(addrs, n, err)
		if err == nil && n == len(addrs) {
			return nil
		}
		time.Sleep(r.interval)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Errorf("agent: join failed after %d attempts: %w", r.attempts, r.lastErr)
}

func (r *retryJoiner) status() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts, len(r.joined)
}

func main() {
	r := &retryJoiner{
		addrs:     []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"},
		joined:    make(map[string]bool),
		maxTries:  5,
		interval:  time.Millisecond,
		failUntil: 2,
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs <- r.retryJoin() }()
	go func() {
		defer wg.Done()
		for i := 0; i < 5; i++ {
			r.status()
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		fmt.Println("retryJoin:", err)
	}
	a, j := r.status()
	fmt.Println("attempts", a, "joined", j)
}
