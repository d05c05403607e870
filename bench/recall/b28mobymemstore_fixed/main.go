// Project: moby/moby (container/memory_store.go, daemon/image_delete.go, daemon/start.go, libcontainerd)
// Bug:     issue #22732 "Deadlock on image delete and container attach"; fixed by PR #22918
// ("Release memoryStore locks before filter/apply", docker 1.11/1.12).
//
// memoryStore.First runs the caller's StoreFilter callback while holding the
// store's read lock. `docker rmi` uses the filter c.IsRunning(), which takes the
// container (State) lock. `docker start` holds the container lock across
// containerd.Create; libcontainerd calls back into the daemon's AttachStreams,
// which needs the store lock (memoryStore.Get). Store-lock -> container-lock on
// one path and container-lock -> store-lock on the other; with a concurrent
// `docker create` (memoryStore.Add) waiting for the write lock, Get's RLock queues
// behind the writer and all three goroutines (and every later `docker ps`) hang.
// Deadlocking acquisition: c.RLock() in memoryStore.Get (called from Daemon.AttachStreams).
// FIXED twin (#22918): First runs the filter on a copy taken by all(), after RUnlock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type State struct {
	sync.Mutex
	Running bool
	Pid     int
}

func (s *State) IsRunning() bool {
	s.Lock()
	res := s.Running
	s.Unlock()
	return res
}

func (s *State) SetRunning(pid int) { s.Running, s.Pid = true, pid } // caller holds the lock

type Container struct {
	*State
	ID      string
	ImageID string
}

type StoreFilter func(*Container) bool

type memoryStore struct {
	s map[string]*Container
	sync.RWMutex
}

func (c *memoryStore) Add(id string, cont *Container) {
	c.Lock()
	c.s[id] = cont
	c.Unlock()
}

func (c *memoryStore) Get(id string) *Container {
	c.RLock() // queued behind Add's pending writer while First holds a reader
	res := c.s[id]
	c.RUnlock()
	return res
}

// all returns a copy of the containers so filters run without the store lock.
func (c *memoryStore) all() []*Container {
	c.RLock()
	containers := make([]*Container, 0, len(c.s))
	for _, cont := range c.s {
		containers = append(containers, cont)
	}
	c.RUnlock()
	return containers
}

// First returns the first container found in the store by a given filter.
func (c *memoryStore) First(filter StoreFilter) *Container {
	for _, cont := range c.all() {
		if filter(cont) {
			return cont
		}
	}
	return nil
}

// Backend is what libcontainerd calls back into (implemented by *Daemon).
type Backend interface {
	AttachStreams(id string) error
}

type libcontainerdClient struct{ backend Backend }

func (clnt *libcontainerdClient) Create(containerID string) error {
	time.Sleep(40 * time.Millisecond) // CreateContainer gRPC to containerd
	return clnt.backend.AttachStreams(containerID)
}

type Daemon struct {
	containers *memoryStore
	containerd *libcontainerdClient
}

func (daemon *Daemon) AttachStreams(id string) error {
	container := daemon.containers.Get(id)
	if container == nil {
		return fmt.Errorf("no such container: %s", id)
	}
	return nil // wire stdio of container
}

func (daemon *Daemon) containerStart(container *Container) error {
	container.Lock()
	defer container.Unlock()
	if err := daemon.containerd.Create(container.ID); err != nil {
		return err
	}
	container.SetRunning(4242)
	return nil
}

func (daemon *Daemon) checkImageDeleteConflict(imgID string) error {
	running := func(c *Container) bool { return c.IsRunning() && c.ImageID == imgID }
	if container := daemon.containers.First(running); container != nil {
		return fmt.Errorf("conflict: unable to delete %s (image is being used by running container %s)", imgID, container.ID)
	}
	return nil
}

func (daemon *Daemon) Register(c *Container) { daemon.containers.Add(c.ID, c) }

func main() {
	daemon := &Daemon{containers: &memoryStore{s: map[string]*Container{}}}
	daemon.containerd = &libcontainerdClient{backend: daemon}
	web := &Container{State: &State{}, ID: "web", ImageID: "sha256:nginx"}
	daemon.Register(web)
	daemon.Register(&Container{State: &State{}, ID: "db", ImageID: "sha256:redis"})

	var wg sync.WaitGroup
	wg.Add(3)
	// docker start web
	go func() { defer wg.Done(); fmt.Println("start:", daemon.containerStart(web)) }()
	go func() { // docker rmi nginx
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		fmt.Println("rmi:", daemon.checkImageDeleteConflict("sha256:nginx"))
	}()
	go func() { // docker create
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		daemon.Register(&Container{State: &State{}, ID: "cache", ImageID: "sha256:memcached"})
		fmt.Println("create: ok")
	}()
	wg.Wait()
}
