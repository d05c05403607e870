// Package pool is a worker pool from another module: it knows nothing of
// confinelint.
package pool

type Pool struct{ tasks chan func() }

// Submit runs task on one of the pool's goroutines.
func (p *Pool) Submit(task func()) { p.tasks <- task }

// Go runs fn on a goroutine of its own, named for logs.
func Go(name string, fn func()) { go fn() }

// Size is no asynchronous API at all.
func (p *Pool) Size(n int) {}
