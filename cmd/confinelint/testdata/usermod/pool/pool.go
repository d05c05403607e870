// Package pool is a small worker pool the shop shares between consumers.
// It knows nothing of confinelint; the consumer declares its API
// asynchronous with //confined:async.
package pool

import "sync"

type Pool struct {
	tasks chan func()
	wg    sync.WaitGroup
}

// New starts n workers.
func New(n int) *Pool {
	p := &Pool{tasks: make(chan func(), n)}
	for range n {
		p.wg.Go(func() {
			for task := range p.tasks {
				task()
			}
		})
	}
	return p
}

// Go runs task on one of the pool's goroutines.
func (p *Pool) Go(task func()) { p.tasks <- task }

// Close stops the workers once the queued tasks ran.
func (p *Pool) Close() {
	close(p.tasks)
	p.wg.Wait()
}
