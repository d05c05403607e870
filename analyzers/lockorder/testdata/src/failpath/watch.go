package failpath

import (
	"errors"
	"sync"
)

// A registry that calls the watcher it is given inline when it cannot
// serve the watch (an unknown name), while the watcher's owner still
// holds its lock around Watch: the owner's lock is taken again on that
// failure path (grpc-go's WatchRouteConfig and an unknown authority).
type Registry struct {
	known map[string][]func(error)
}

func (r *Registry) find(name string) ([]func(error), error) {
	ws, ok := r.known[name]
	if !ok {
		return nil, errors.New("unknown name")
	}
	return ws, nil
}

func (r *Registry) Watch(name string, cb func(error)) {
	ws, err := r.find(name)
	if err != nil {
		cb(err)
		return
	}
	r.known[name] = append(ws, cb)
}

type Owner struct {
	mu   sync.Mutex
	reg  *Registry
	last error
}

func (o *Owner) onUpdate(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last = err
}

func (o *Owner) Start(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reg.Watch(name, o.onUpdate) // want `Owner.mu locked again by Registry.Watch -> Owner.onUpdate \(at watch.go:\d+, on the path where find fails\) while held since watch.go:\d+: self-deadlock \[double-lock\]`
}

// StartFixed registers after it lets the lock go. Silent.
func (o *Owner) StartFixed(name string) {
	o.mu.Lock()
	o.last = nil
	o.mu.Unlock()
	o.reg.Watch(name, o.onUpdate)
}

// A callback called inline when a value is already there is on a branch
// of state its caller may rule out (the owner registers before anyone
// sets the name): edges only, silent.
type Cache struct {
	values map[string]string
}

func (c *Cache) WatchValue(name string, cb func(error)) {
	if _, ok := c.values[name]; ok {
		cb(nil)
	}
}

func (o *Owner) Subscribe(c *Cache, name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c.WatchValue(name, o.onUpdate)
}

// A callback on a failure path that is itself conditional (only for a
// retryable error) has a second condition the caller may rule out:
// silent.
type Retrier struct {
	reg *Registry
}

func (r *Retrier) Watch(name string, retryable bool, cb func(error)) {
	_, err := r.reg.find(name)
	if err != nil {
		if retryable {
			cb(err)
		}
		return
	}
}

func (o *Owner) StartRetrying(r *Retrier, name string, retryable bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r.Watch(name, retryable, o.onUpdate)
}
