package main

import "sync"

type Listener interface{ OnChange(v int) }

type Registry struct {
	mu        sync.Mutex
	listeners []Listener
	v         int
}

func (r *Registry) Add(l Listener) {
	r.mu.Lock()
	r.listeners = append(r.listeners, l)
	r.mu.Unlock()
}

func (r *Registry) Set(v int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.v = v
	for _, l := range r.listeners {
		l.OnChange(v)
	}
}

func (r *Registry) Get() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v
}

type Controller struct {
	mu  sync.Mutex
	reg *Registry
	cur int
}

func (c *Controller) OnChange(v int) {
	c.mu.Lock()
	c.cur = v
	c.mu.Unlock()
}

func (c *Controller) Sync() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = c.reg.Get()
}

func main() {
	r := &Registry{}
	c := &Controller{reg: r}
	r.Add(c)
	go c.Sync()
	r.Set(1)
}
