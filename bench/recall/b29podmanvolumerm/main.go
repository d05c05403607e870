// Project: containers/podman (libpod) — libpod/runtime_volume_common.go,
// libpod/container_internal.go
// Issue: containers/podman#23613 "ABBA deadlock in podman volume rm --force".
//
// Almost every container code path takes the container lock first and then
// the lock of each named volume it uses (e.g. start -> mountStorage ->
// mountNamedVolume takes vol.lock while ctr.lock is held). Runtime.removeVolume
// with force=true does the opposite: it locks the volume, finds the containers
// using it and calls removeContainer on each, which locks the container.
// `podman run -v test:/test` racing with `podman volume rm --force test`
// therefore deadlocks: the start path blocks on v.lock.Lock() in
// mountNamedVolume (line 63) while removeVolume blocks on c.lock.Lock() in
// removeContainer (line 82).
package main

import (
	"context"
	"fmt"
	"sync"
)

type Volume struct {
	name    string
	lock    sync.Mutex
	runtime *Runtime
	state   struct{ MountCount uint }
}

type ContainerNamedVolume struct{ Name, Dest string }

type Container struct {
	id      string
	lock    sync.Mutex
	runtime *Runtime
	config  struct{ NamedVolumes []*ContainerNamedVolume }
	removed bool
}

type Runtime struct {
	mu         sync.Mutex // protects the in-memory "database"
	containers map[string]*Container
	volumes    map[string]*Volume
	// test hook: interleave the two commands deterministically
	hook func(where string)
}

func (r *Runtime) volumeInUse(v *Volume) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id, c := range r.containers {
		for _, nv := range c.config.NamedVolumes {
			if nv.Name == v.name {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// mountNamedVolume is called with the container lock held.
func (c *Container) mountNamedVolume(v *Volume) error {
	v.lock.Lock() // ctr.lock -> vol.lock
	defer v.lock.Unlock()
	v.state.MountCount++
	return nil
}

func (c *Container) Start(ctx context.Context) error {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.runtime.hook("start-locked-ctr")
	for _, nv := range c.config.NamedVolumes {
		if err := c.mountNamedVolume(c.runtime.volumes[nv.Name]); err != nil {
			return err
		}
	}
	return nil
}

func (r *Runtime) removeContainer(ctx context.Context, c *Container, force bool) error {
	c.lock.Lock() // vol.lock -> ctr.lock
	defer c.lock.Unlock()
	c.removed = true
	r.mu.Lock()
	delete(r.containers, c.id)
	r.mu.Unlock()
	return nil
}

func (r *Runtime) removeVolume(ctx context.Context, v *Volume, force bool) error {
	v.lock.Lock()
	defer v.lock.Unlock()
	deps := r.volumeInUse(v)
	r.hook("rm-locked-vol")
	if len(deps) > 0 {
		if !force {
			return fmt.Errorf("volume %s is being used by containers %v", v.name, deps)
		}
		for _, id := range deps {
			r.mu.Lock()
			ctr := r.containers[id]
			r.mu.Unlock()
			if err := r.removeContainer(ctx, ctr, true); err != nil {
				return err
			}
		}
	}
	r.mu.Lock()
	delete(r.volumes, v.name)
	r.mu.Unlock()
	return nil
}

func main() {
	r := &Runtime{containers: map[string]*Container{}, volumes: map[string]*Volume{}}
	v := &Volume{name: "test", runtime: r}
	r.volumes["test"] = v
	c := &Container{id: "cb054c09", runtime: r}
	c.config.NamedVolumes = []*ContainerNamedVolume{{Name: "test", Dest: "/test"}}
	r.containers[c.id] = c

	ctrLocked, volLocked := make(chan struct{}), make(chan struct{})
	r.hook = func(where string) {
		switch where {
		case "start-locked-ctr":
			close(ctrLocked)
			<-volLocked
		case "rm-locked-vol":
			close(volLocked)
			<-ctrLocked
		}
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = c.Start(context.Background()) }()                 // podman run -v test:/test
	go func() { defer wg.Done(); _ = r.removeVolume(context.Background(), v, true) }() // podman volume rm --force test
	wg.Wait()
	fmt.Println("done")
}
