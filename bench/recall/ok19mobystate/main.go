// Modelled on moby's container state machine (container/state.go and the
// daemon's monitor): state transitions run under the container's lock and
// fire registered hooks with the container passed in. Hooks inspect state
// only through *Locked helpers, which assume the caller already holds c.mu.

package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type Container struct {
	ID string // immutable

	mu         sync.Mutex
	running    bool
	restarting bool
	exitCode   int
	restarts   int

	hooks []func(c *Container) // registered before the container starts
}

func (c *Container) isRunningLocked() bool { return c.running }
func (c *Container) exitCodeLocked() int   { return c.exitCode }
func (c *Container) restartCountLocked() int {
	return c.restarts
}

func (c *Container) fireHooksLocked() {
	for _, h := range c.hooks {
		h(c)
	}
}

func (c *Container) SetRunning() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running, c.restarting = true, false
	c.fireHooksLocked()
}

func (c *Container) SetStopped(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running = false
	c.exitCode = code
	c.fireHooksLocked()
}

func (c *Container) SetRestarting(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running, c.restarting = true, true
	c.exitCode = code
	c.restarts++
	c.fireHooksLocked()
}

func (c *Container) StateString() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.restarting {
		return fmt.Sprintf("Restarting (%d)", c.exitCode)
	}
	if c.running {
		return "Up"
	}
	return fmt.Sprintf("Exited (%d)", c.exitCode)
}

type daemonStats struct {
	starts, failures, healthyStops atomic.Int64
	maxRestarts                    atomic.Int64
}

func (d *daemonStats) hooks() []func(*Container) {
	return []func(*Container){
		func(c *Container) {
			if c.isRunningLocked() {
				d.starts.Add(1)
			}
		},
		func(c *Container) {
			if !c.isRunningLocked() && c.exitCodeLocked() != 0 {
				d.failures.Add(1)
			} else if !c.isRunningLocked() {
				d.healthyStops.Add(1)
			}
		},
		func(c *Container) {
			n := int64(c.restartCountLocked())
			for {
				cur := d.maxRestarts.Load()
				if n <= cur || d.maxRestarts.CompareAndSwap(cur, n) {
					return
				}
			}
		},
	}
}

func main() {
	stats := &daemonStats{}
	var ctrs []*Container
	for i := 0; i < 5; i++ {
		ctrs = append(ctrs, &Container{ID: fmt.Sprintf("c%02d", i), hooks: stats.hooks()})
	}

	var wg sync.WaitGroup
	for i, c := range ctrs {
		wg.Add(2)
		go func(i int, c *Container) { // containerd event monitor
			defer wg.Done()
			for j := 0; j < 30; j++ {
				c.SetRunning()
				if (i+j)%4 == 0 {
					c.SetRestarting(137)
				} else {
					c.SetStopped(j % 2)
				}
			}
		}(i, c)
		go func(c *Container) { // `docker ps` poller
			defer wg.Done()
			for j := 0; j < 30; j++ {
				_ = c.ID + " " + c.StateString()
			}
		}(c)
	}
	wg.Wait()

	for _, c := range ctrs {
		fmt.Printf("%s %s\n", c.ID, c.StateString())
	}
	fmt.Printf("starts=%d failures=%d clean=%d maxRestarts=%d\n",
		stats.starts.Load(), stats.failures.Load(), stats.healthyStops.Load(), stats.maxRestarts.Load())
}
