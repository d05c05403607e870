// Pattern: podman libpod Container.Start -> c.checkDependenciesRunning()
// (libpod/container_internal.go). Start locks its own container
// (`if !c.batched { c.lock.Lock() ... }`) and then queries each dependency
// container through dep.State(), which locks *the dependency's* lock under
// `if !dep.batched`. A container can only depend on containers created
// before it (and never on itself), so the lock graph is a DAG: dependent ->
// dependency, and no mutex is ever taken twice on a goroutine.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

type Container struct {
	name    string
	lock    sync.Mutex
	state   string
	deps    []*Container
	batched bool
}

type Runtime struct {
	ctrs []*Container
}

func (r *Runtime) NewContainer(name string, deps ...*Container) (*Container, error) {
	for _, d := range deps {
		if d == nil || d.name == name {
			return nil, fmt.Errorf("invalid dependency for %s", name)
		}
	}
	c := &Container{name: name, state: "created", deps: deps}
	r.ctrs = append(r.ctrs, c)
	return c, nil
}

func (c *Container) State() string {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	return c.state
}

func (c *Container) checkDependenciesRunning() []string {
	var notRunning []string
	for _, dep := range c.deps {
		if dep.State() != "running" { // locks dep.lock, not c.lock
			notRunning = append(notRunning, dep.name)
		}
	}
	return notRunning
}

func (c *Container) Start() error {
	if !c.batched {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	if c.state == "running" {
		return nil
	}
	if missing := c.checkDependenciesRunning(); len(missing) > 0 {
		return fmt.Errorf("%s: dependencies not running: %v", c.name, missing)
	}
	c.state = "running"
	return nil
}

func main() {
	r := &Runtime{}
	infra, _ := r.NewContainer("infra")
	db, _ := r.NewContainer("db", infra)
	cache, _ := r.NewContainer("cache", infra)
	web, _ := r.NewContainer("web", db, cache)
	if _, err := r.NewContainer("self", nil); err != nil {
		fmt.Println("rejected:", err)
	}

	// Start everything concurrently, retrying until the dependency order
	// works itself out.
	var wg sync.WaitGroup
	for _, c := range []*Container{web, cache, db, infra} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// infra has no dependencies, so progress is guaranteed.
			for c.Start() != nil {
				_ = infra.State()
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	for _, c := range r.ctrs {
		fmt.Println(c.name, c.State())
	}
}
