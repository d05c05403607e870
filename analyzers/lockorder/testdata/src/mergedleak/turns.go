package mergedleak

import "sync"

// A loop that takes the lock and releases it in each turn, but breaks out
// with it held when a limit is reached (a worker pool's boost): after the
// loop the lock is held on the break's path and not at all on the loop's
// normal exit. Every turn shows the function means to release it.
type Pool struct {
	mu      sync.Mutex
	workers int
	max     int
}

func (p *Pool) boost(n int) int {
	added := 0
	for i := 0; i < n; i++ {
		p.mu.Lock()
		if p.workers >= p.max {
			break
		}
		p.workers++
		p.mu.Unlock()
		added++
	}
	return added // want `Pool.mu taken at turns.go:18 is still held on some paths into this return and released on others`
}

// boostOK unlocks before it breaks. Silent.
func (p *Pool) boostOK(n int) int {
	added := 0
	for i := 0; i < n; i++ {
		p.mu.Lock()
		if p.workers >= p.max {
			p.mu.Unlock()
			break
		}
		p.workers++
		p.mu.Unlock()
		added++
	}
	return added
}

// boostFlag breaks holding the lock and releases it after the loop when
// it did: the flag tells the paths apart. Silent.
func (p *Pool) boostFlag(n int) {
	full := false
	for i := 0; i < n; i++ {
		p.mu.Lock()
		if p.workers >= p.max {
			full = true
			break
		}
		p.workers++
		p.mu.Unlock()
	}
	if full {
		p.mu.Unlock()
	}
}

var _ = []any{(*Pool).boost, (*Pool).boostOK, (*Pool).boostFlag}
