// Package pool is a worker pool from another module, for the examples.
package pool

type Pool struct{ tasks chan func() }

// Submit runs task on one of the pool's goroutines.
func (p *Pool) Submit(task func()) { p.tasks <- task }
