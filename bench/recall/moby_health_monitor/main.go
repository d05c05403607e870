// Project: moby (daemon/health.go, container/health.go)
// Bug: the daemon stopped a container's health monitor while holding the
// container lock (c.Lock in the kill/stop path), and CloseMonitorChannel
// signalled the monitor with a blocking send on the unbuffered stop channel.
// The monitor goroutine was inside handleProbeResult waiting for c.Lock, so
// it never got back to its select: send-under-lock deadlock.
package main

import (
	"sync"
	"time"
)

type HealthcheckResult struct {
	ExitCode int
	Start    time.Time
}

type Health struct {
	Status string
	stop   chan struct{}
}

// OpenMonitorChannel creates and returns a new monitor channel.
func (s *Health) OpenMonitorChannel() chan struct{} {
	if s.stop == nil {
		s.stop = make(chan struct{})
		return s.stop
	}
	return nil
}

// CloseMonitorChannel tells the monitor goroutine to stop.
func (s *Health) CloseMonitorChannel() {
	if s.stop != nil {
		s.stop <- struct{}{} // waits for monitor to receive
		s.stop = nil
	}
}

type State struct {
	Running bool
	Health  *Health
}

type Container struct {
	sync.Mutex
	ID    string
	State *State
}

type probe interface {
	run(c *Container) (*HealthcheckResult, error)
}

type cmdProbe struct{}

func (p *cmdProbe) run(c *Container) (*HealthcheckResult, error) {
	return &HealthcheckResult{Start: time.Now()}, nil
}

type Daemon struct{}

func handleProbeResult(d *Daemon, c *Container, result *HealthcheckResult) {
	c.Lock()
	defer c.Unlock()
	if result.ExitCode == 0 {
		c.State.Health.Status = "healthy"
	}
}

func monitor(d *Daemon, c *Container, stop chan struct{}, p probe) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Millisecond):
			result, _ := p.run(c)
			handleProbeResult(d, c, result)
		}
	}
}

func (d *Daemon) initHealthMonitor(c *Container) {
	if stop := c.State.Health.OpenMonitorChannel(); stop != nil {
		go monitor(d, c, stop, &cmdProbe{})
	}
}

func (d *Daemon) stopHealthchecks(c *Container) {
	if h := c.State.Health; h != nil {
		h.CloseMonitorChannel()
	}
}

func (d *Daemon) Kill(c *Container) {
	c.Lock()
	defer c.Unlock()
	d.stopHealthchecks(c)
	c.State.Running = false
}

func main() {
	d := &Daemon{}
	c := &Container{ID: "abc", State: &State{Running: true, Health: &Health{}}}
	d.initHealthMonitor(c)
	time.Sleep(5 * time.Millisecond)
	go d.Kill(c)
	time.Sleep(time.Second)
}
