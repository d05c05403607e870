// Modelled on moby's daemon/logger: a container holds its own mutex while
// calling Log / Close on its logging driver. The json-file style driver is
// synchronous, while the ring logger (non-blocking mode) buffers messages
// and its Close waits for its own drain goroutine. That goroutine only uses
// the ring's mutex/cond and the wrapped driver's mutex -- never the
// container's -- so waiting for it under container.mu cannot deadlock.
package main

import (
	"fmt"
	"sync"
)

type Message struct{ Line string }

type Logger interface {
	Log(*Message) error
	Close() error
}

// jsonFileLogger: synchronous, never blocks beyond its own short lock.
type jsonFileLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *jsonFileLogger) Log(m *Message) error {
	l.mu.Lock()
	l.lines = append(l.lines, m.Line)
	l.mu.Unlock()
	return nil
}
func (l *jsonFileLogger) Close() error { return nil }

// ringLogger: asynchronous; Close blocks until run() has drained the ring.
type ringLogger struct {
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*Message
	maxSize int
	closed  bool
	dropped int

	driver Logger
	done   chan struct{}
}

func newRingLogger(driver Logger, maxSize int) *ringLogger {
	r := &ringLogger{driver: driver, maxSize: maxSize, done: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	go r.run()
	return r
}

func (r *ringLogger) Log(m *Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) >= r.maxSize {
		r.dropped++
		return nil
	}
	r.queue = append(r.queue, m)
	r.cond.Signal()
	return nil
}

func (r *ringLogger) run() {
	defer close(r.done)
	for {
		r.mu.Lock()
		for len(r.queue) == 0 && !r.closed {
			r.cond.Wait()
		}
		if len(r.queue) == 0 && r.closed {
			r.mu.Unlock()
			return
		}
		m := r.queue[0]
		r.queue = r.queue[1:]
		r.mu.Unlock()
		r.driver.Log(m) // outside r.mu; driver uses only its own lock
	}
}

func (r *ringLogger) Close() error {
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	<-r.done // wait for the drain goroutine
	return r.driver.Close()
}

type Container struct {
	ID        string
	mu        sync.Mutex
	logDriver Logger
}

func (c *Container) WriteLog(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logDriver != nil {
		c.logDriver.Log(&Message{Line: c.ID + ": " + line})
	}
}

func (c *Container) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logDriver != nil {
		c.logDriver.Close() // may block in ringLogger.Close
		c.logDriver = nil
	}
}

func main() {
	sync1, sync2 := &jsonFileLogger{}, &jsonFileLogger{}
	containers := []*Container{
		{ID: "c1", logDriver: sync1},
		{ID: "c2", logDriver: newRingLogger(sync2, 16)},
	}
	var wg sync.WaitGroup
	for _, c := range containers {
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func(c *Container, w int) {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					c.WriteLog(fmt.Sprintf("stdout %d/%d", w, i))
				}
			}(c, w)
		}
	}
	wg.Wait()
	for _, c := range containers {
		c.Reset()
	}
	sync1.mu.Lock()
	sync2.mu.Lock()
	fmt.Println("c1 lines:", len(sync1.lines), "c2 lines:", len(sync2.lines))
	sync2.mu.Unlock()
	sync1.mu.Unlock()
}
