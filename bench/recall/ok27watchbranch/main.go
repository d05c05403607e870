package main

import (
	"fmt"
	"sync"
)

// Registry stores named values and notifies watchers on change.
type Registry struct {
	mu       sync.Mutex
	values   map[string]string
	watchers map[string][]func(string)
}

func NewRegistry() *Registry {
	return &Registry{values: map[string]string{}, watchers: map[string][]func(string){}}
}

// Watch registers cb for name. If name already has a value, cb is invoked
// inline (on the caller's goroutine) with the current value.
func (r *Registry) Watch(name string, cb func(string)) {
	r.mu.Lock()
	r.watchers[name] = append(r.watchers[name], cb)
	v, ok := r.values[name]
	r.mu.Unlock()
	if ok {
		cb(v)
	}
}

// Set stores the value and invokes watchers after releasing r.mu.
func (r *Registry) Set(name, val string) {
	r.mu.Lock()
	r.values[name] = val
	cbs := append(([]func(string))(nil), r.watchers[name]...)
	r.mu.Unlock()
	for _, cb := range cbs {
		cb(val)
	}
}

// Worker publishes its own status key. Nobody else writes that key, and
// the worker only sets it after Register has returned, so the inline
// branch of Watch is never taken while w.mu is held.
type Worker struct {
	mu      sync.Mutex
	name    string
	reg     *Registry
	status  string
	changes int
}

func (w *Worker) statusKey() string { return "worker/" + w.name + "/status" }

func (w *Worker) onStatus(v string) {
	w.mu.Lock()
	w.status = v
	w.changes++
	w.mu.Unlock()
}

func (w *Worker) Register() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status = "registering"
	w.reg.Watch(w.statusKey(), w.onStatus) // key not yet set: no inline call
}

func (w *Worker) Run(steps int) {
	for i := 0; i < steps; i++ {
		w.reg.Set(w.statusKey(), fmt.Sprintf("step-%d", i))
	}
	w.reg.Set(w.statusKey(), "done")
}

func main() {
	reg := NewRegistry()
	var wg sync.WaitGroup
	workers := make([]*Worker, 4)
	for i := range workers {
		workers[i] = &Worker{name: fmt.Sprintf("w%d", i), reg: reg}
		workers[i].Register()
	}
	for _, w := range workers {
		wg.Add(1)
		go func(w *Worker) {
			defer wg.Done()
			w.Run(5)
		}(w)
	}
	wg.Wait()
	for _, w := range workers {
		w.mu.Lock()
		fmt.Println(w.name, w.status, w.changes)
		w.mu.Unlock()
	}
}
