// Package main models moby's daemon logging of container state changes
// (daemon/monitor.go, container/state.go): a daemon logger with its own mutex
// formats "%s" arguments while holding it, and *container implements String()
// by reading its state under container.mu. The lock order is therefore
// logger.mu -> container.mu, and container code never logs while holding
// container.mu (it unlocks first), so the order is never reversed.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type daemonLogger struct {
	mu      sync.Mutex
	entries []string
}

func (l *daemonLogger) Infof(format string, v ...interface{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, "level=info msg=\""+fmt.Sprintf(format, v...)+"\"")
}

func (l *daemonLogger) Count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.entries {
		if strings.Contains(e, substr) {
			n++
		}
	}
	return n
}

var logger = &daemonLogger{}

type container struct {
	mu       sync.Mutex
	id       string
	running  bool
	exitCode int
	restarts int
}

// String takes c.mu; callers must not hold c.mu when logging a container.
func (c *container) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	state := "exited"
	if c.running {
		state = "running"
	}
	return fmt.Sprintf("%s[%s exit=%d restarts=%d]", c.id[:12], state, c.exitCode, c.restarts)
}

func (c *container) SetRunning() {
	c.mu.Lock()
	c.running = true
	c.mu.Unlock()
	logger.Infof("container started: %s", c)
}

func (c *container) SetStopped(code int) (restart bool) {
	c.mu.Lock()
	c.running = false
	c.exitCode = code
	restart = code != 0 && c.restarts < 3
	if restart {
		c.restarts++
	}
	c.mu.Unlock()
	logger.Infof("container exited: %s restart=%v", c, restart)
	return restart
}

// monitor plays the containerd event loop for one container.
func monitor(c *container, exits []int, wg *sync.WaitGroup) {
	defer wg.Done()
	for _, code := range exits {
		c.SetRunning()
		if !c.SetStopped(code) {
			return
		}
	}
}

func main() {
	ids := []string{
		"3f4e5d6c7b8a9f0e1d2c3b4a",
		"a1b2c3d4e5f60718293a4b5c",
		"0f1e2d3c4b5a69788796a5b4",
		"deadbeefcafebabe00112233",
	}
	containers := make([]*container, len(ids))
	for i, id := range ids {
		containers[i] = &container{id: id}
	}

	var wg sync.WaitGroup
	for i, c := range containers {
		wg.Add(1)
		go monitor(c, []int{1, 137, i % 2, 1, 0}, &wg)
	}
	// `docker ps` style listing concurrently stringifies containers
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; n < 20; n++ {
			for _, c := range containers {
				logger.Infof("ps: %v", c)
			}
		}
	}()
	wg.Wait()

	fmt.Println("started:", logger.Count("container started"),
		"exited:", logger.Count("container exited"), "ps:", logger.Count("ps: "))
	for _, c := range containers {
		fmt.Println(c)
	}
}
