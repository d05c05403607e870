// Package pool is confinelint's driver test input: directive problems
// that every analyzer build reports.
package pool

import "sync"

// Pool hands out work.
type Pool struct {
	mu sync.Mutex
	//confined:gaurdedby mu
	n int
}

// Grow is fine.
func (p *Pool) Grow() {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
}

// Size has a stale suppression.
func (p *Pool) Size() int {
	//confined:ignore read once at startup
	return 1
}
