package blocking

import (
	"sync"
	"time"
)

// A WaitGroup made locally and kept in a field is the one the field's
// readers wait on: the goroutine calling Done on the local unblocks
// e.wg.Wait().
type Engine struct {
	mu        sync.RWMutex
	done      chan struct{}
	wg        *sync.WaitGroup
	cacheSize int
}

func (e *Engine) enableCompactions() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.done = make(chan struct{})
	wg := new(sync.WaitGroup)
	wg.Add(1)
	e.wg = wg
	go func(quit <-chan struct{}) {
		defer wg.Done()
		e.compactCache(quit)
	}(e.done)
}

func (e *Engine) shouldCompact() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cacheSize > 1024
}

func (e *Engine) compactCache(quit <-chan struct{}) {
	for {
		select {
		case <-quit:
			return
		default:
		}
		if e.shouldCompact() {
			time.Sleep(time.Millisecond)
		}
	}
}

func (e *Engine) disableCompactions() {
	e.mu.Lock()
	defer e.mu.Unlock()
	close(e.done)
	e.wg.Wait() // want `Engine.mu \(taken at home.go:51\) is held across a WaitGroup.Wait; the goroutine started by the go statement, which would unblock it, also takes Engine.mu \[blocking-held\]`
}

// Correct: the wait happens after the lock is let go.
func (e *Engine) stopCompactions() {
	e.mu.Lock()
	close(e.done)
	wg := e.wg
	e.mu.Unlock()
	wg.Wait()
}

// A channel handed to the goroutine's function as an argument is the one
// its callers pass: the accessor that made it (returning nil when there
// is one already) and the field it lives in name it too.
type Health struct {
	stop chan struct{}
}

func (h *Health) openMonitor() chan struct{} {
	if h.stop == nil {
		h.stop = make(chan struct{})
		return h.stop
	}
	return nil
}

func (h *Health) closeMonitor() {
	if h.stop != nil {
		h.stop <- struct{}{}
		h.stop = nil
	}
}

type Container struct {
	sync.Mutex
	health *Health
	status string
}

func monitor(c *Container, stop chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Millisecond):
			c.Lock()
			c.status = "healthy"
			c.Unlock()
		}
	}
}

func initMonitor(c *Container) {
	if stop := c.health.openMonitor(); stop != nil {
		go monitor(c, stop)
	}
}

func kill(c *Container) {
	c.Lock()
	defer c.Unlock()
	c.health.closeMonitor() // want `Container.Mutex \(taken at home.go:114\) is held across a channel send \(in Health.closeMonitor at home.go:83\); the goroutine started by the go statement, which would unblock it, also takes Container.Mutex \[blocking-held\]`
}

// Correct: the monitor is stopped before the container is locked.
func stop(c *Container) {
	c.health.closeMonitor()
	c.Lock()
	c.status = "stopped"
	c.Unlock()
}

var _ = []any{(*Engine).enableCompactions, (*Engine).disableCompactions, (*Engine).stopCompactions, initMonitor, kill, stop}
