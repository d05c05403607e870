// Package pool runs jobs. Run is asynchronous only if the driver is told so
// with -confined.async=example.com/multi/pool.(*Pool).Run:arg0.
package pool

// Pool hands jobs to a worker goroutine.
type Pool struct{ jobs chan func() }

// Run queues f.
func (p *Pool) Run(f func()) { p.jobs <- f }
