// Pattern: Docker daemon container stop/die path (daemon/monitor.go,
// daemon/events.go): the state transition is done under container.Lock(),
// the lock is dropped, and only then daemon.LogContainerEvent re-reads the
// container's attributes through its locking accessors. Here the lock is
// conditional (`if !c.batched`) because the same Stop is also used from a
// batched copy (podman-style Batch) where the caller already holds the lock;
// on the non-batched path Stop unlocks before calling the event logger.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type Events struct {
	mu  sync.Mutex
	log []string
}

func (e *Events) Log(c *Container, action string) {
	attrs := c.Attributes() // conditionally locks c.lock
	e.mu.Lock()
	e.log = append(e.log, action+" "+attrs)
	e.mu.Unlock()
}

type Container struct {
	lock     *sync.Mutex
	name     string
	exitCode *int
	running  *bool
	events   *Events
	batched  bool
}

func (c *Container) Attributes() string {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	return fmt.Sprintf("name=%s exitCode=%d", c.name, *c.exitCode)
}

func (c *Container) Stop(code int) {
	if !c.batched {
		c.lock.Lock()
	}
	wasRunning := *c.running
	*c.running = false
	*c.exitCode = code
	if !c.batched {
		c.lock.Unlock()
	}
	if wasRunning {
		c.events.Log(c, "die") // lock already released (or never taken)
	}
}

func (c *Container) Batch(fn func(*Container)) {
	c.lock.Lock()
	defer c.lock.Unlock()
	cp := &Container{lock: c.lock, name: c.name, exitCode: c.exitCode,
		running: c.running, events: c.events, batched: true}
	fn(cp)
}

func newContainer(name string, ev *Events) *Container {
	code, running := 0, true
	return &Container{lock: new(sync.Mutex), name: name, exitCode: &code, running: &running, events: ev}
}

func main() {
	ev := &Events{}
	var ctrs []*Container
	for i := 0; i < 4; i++ {
		ctrs = append(ctrs, newContainer(fmt.Sprintf("c%d", i), ev))
	}
	var wg sync.WaitGroup
	for i, c := range ctrs {
		wg.Add(2)
		go func() { defer wg.Done(); c.Stop(137) }()
		go func() {
			defer wg.Done()
			c.Batch(func(bc *Container) {
				if i%2 == 0 {
					bc.Stop(0)
				}
				_ = bc.Attributes()
			})
		}()
	}
	wg.Wait()
	ev.mu.Lock()
	fmt.Println(strings.Join(ev.log, "\n"))
	ev.mu.Unlock()
}
