package main

import "sync"

// A watcher runs the handlers registered with it under its lock, and the
// handlers read the mesh back through the watcher (istio's mesh watcher):
// whichever of them runs, it read-locks the lock held, and the program
// makes one watcher. Registered through an environment that embeds the
// Watcher interface: the embedding delegates, so the watcher's
// AddMeshHandler is the one that stores them.

type Watcher interface {
	Mesh() string
	AddMeshHandler(h func())
}

type meshWatcher struct {
	mu       sync.RWMutex
	mesh     string
	handlers []func()
}

func (w *meshWatcher) Mesh() string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.mesh
}

func (w *meshWatcher) AddMeshHandler(h func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handlers = append(w.handlers, h)
}

func (w *meshWatcher) reload(mesh string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mesh = mesh
	for _, h := range w.handlers {
		h() // want `meshWatcher.mu locked again by (main\.)?runMeshWatcher\.func1 or (main\.)?runMeshWatcher\.func2 -> meshWatcher.Mesh \(at meshhandlers.go:\d+\), the same lock: the program makes one meshWatcher .*\[double-lock\]`
	}
}

type environment struct {
	Watcher
	domain string
}

var trustDomain string

func runMeshWatcher() {
	env := &environment{Watcher: &meshWatcher{}}
	pushes := make(chan string, 2)
	env.AddMeshHandler(func() { trustDomain = env.Mesh() })
	env.AddMeshHandler(func() { pushes <- env.Mesh() })
	env.Watcher.(*meshWatcher).reload("corp")
}

// The same registry where only one of its listeners reads the config
// back: which listener runs is not known. Silent.

type config struct {
	mu        sync.RWMutex
	value     string
	listeners []func()
}

func (c *config) Value() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.value
}

func (c *config) Listen(f func()) { c.listeners = append(c.listeners, f) }

func (c *config) Set(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.value = v
	for _, f := range c.listeners {
		f()
	}
}

var lastValue string

func runConfig() {
	c := &config{}
	c.Listen(func() { lastValue = "changed" })
	c.Listen(func() { lastValue = c.Value() })
	c.Set("x")
}

// One hook, registered through a struct embedding the interface: the
// embedding is no implementation of its own, so the hook is the one
// stored and the one run.

type Registry interface{ Register(f func()) }

type hookSet struct {
	mu    sync.Mutex
	hooks []func()
	fired int
}

func (s *hookSet) Register(f func()) { s.hooks = append(s.hooks, f) }

func (s *hookSet) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fired
}

func (s *hookSet) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fired++
	for _, f := range s.hooks {
		f() // want `hookSet.mu locked again by (main\.)?runHooks\.func1 -> hookSet.count \(at meshhandlers.go:\d+\), the same lock: the program makes one hookSet .*\[double-lock\]`
	}
}

type app struct{ Registry }

var fired int

func runHooks() {
	s := &hookSet{}
	a := &app{Registry: s}
	a.Register(func() { fired = s.count() })
	s.fire()
}
