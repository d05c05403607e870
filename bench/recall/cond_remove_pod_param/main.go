// Pattern: podman libpod Runtime.removeContainer(ctx, c, ..., removePod bool)
// (libpod/runtime_ctr.go): when removePod is true the caller (removePod) is
// already holding the pod lock, so removeContainer only does
// `if !removePod { pod.lock.Lock(); defer pod.lock.Unlock() }`.
// Lock order is always pod lock -> container lock.
package main

import (
	"fmt"
	"sync"
)

type Pod struct {
	id   string
	lock sync.Mutex
	ctrs map[string]*Container
}

type Container struct {
	id    string
	pod   *Pod
	lock  sync.Mutex
	state string
}

type Runtime struct {
	mu   sync.Mutex
	pods map[string]*Pod
}

func (r *Runtime) RemoveContainer(c *Container) error {
	return r.removeContainer(c, false)
}

// removeContainer removes c. If removePod is true, the pod lock of c.pod is
// held by the caller.
func (r *Runtime) removeContainer(c *Container, removePod bool) error {
	if c.pod != nil && !removePod {
		c.pod.lock.Lock()
		defer c.pod.lock.Unlock()
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	if c.state == "removed" {
		return fmt.Errorf("container %s already removed", c.id)
	}
	c.state = "removed"
	if c.pod != nil {
		delete(c.pod.ctrs, c.id)
	}
	return nil
}

func (r *Runtime) RemovePod(p *Pod) error {
	p.lock.Lock()
	defer p.lock.Unlock()

	ctrs := make([]*Container, 0, len(p.ctrs))
	for _, c := range p.ctrs {
		ctrs = append(ctrs, c)
	}
	for _, c := range ctrs {
		if err := r.removeContainer(c, true); err != nil {
			return err
		}
	}
	r.mu.Lock()
	delete(r.pods, p.id)
	r.mu.Unlock()
	return nil
}

func main() {
	r := &Runtime{pods: map[string]*Pod{}}
	var all []*Container
	for i := 0; i < 3; i++ {
		p := &Pod{id: fmt.Sprintf("pod%d", i), ctrs: map[string]*Container{}}
		for j := 0; j < 4; j++ {
			c := &Container{id: fmt.Sprintf("pod%d-c%d", i, j), pod: p, state: "running"}
			p.ctrs[c.id] = c
			all = append(all, c)
		}
		r.pods[p.id] = p
	}
	pods := []*Pod{r.pods["pod0"], r.pods["pod1"], r.pods["pod2"]}

	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.RemovePod(p) }()
	}
	for _, c := range all {
		wg.Add(1)
		go func() { defer wg.Done(); _ = r.RemoveContainer(c) }()
	}
	wg.Wait()
	fmt.Println("pods left:", len(r.pods))
}
