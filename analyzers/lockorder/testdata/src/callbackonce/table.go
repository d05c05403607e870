package callbackonce

import "sync"

// Router calls handlers looked up in a map and hooks kept in a slice,
// with its lock held.
type Router struct {
	mu       sync.Mutex
	handlers map[string]func()
	hooks    []func()
}

type Session struct {
	mu     sync.Mutex
	router *Router
	hits   int
}

type Audit struct {
	mu     sync.Mutex
	router *Router
	n      int
}

func (s *Session) hit() {
	s.mu.Lock()
	s.hits++
	s.mu.Unlock()
}

func (a *Audit) note() {
	a.mu.Lock()
	a.n++
	a.mu.Unlock()
}

func NewRouter(s *Session, a *Audit) *Router {
	r := &Router{handlers: map[string]func(){}}
	r.handlers["hit"] = s.hit
	r.hooks = append(r.hooks, a.note)
	return r
}

func (r *Router) serve(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.handlers[name]; ok {
		h()
	}
}

func (r *Router) fire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.hooks {
		h()
	}
}

func (s *Session) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.router.mu.Lock() // want `lock order inversion: Router.mu then Session.mu in Router.serve \(table.go:45 -> table.go:48 via Session.hit\) but Session.mu then Router.mu in Session.close \(table.go:61 -> table.go:63\) \[lock-order\]`
	delete(s.router.handlers, "hit")
	s.router.mu.Unlock()
}

func (a *Audit) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.router.mu.Lock() // want `lock order inversion: Router.mu then Audit.mu in Router.fire \(table.go:53 -> table.go:56 via Audit.note\) but Audit.mu then Router.mu in Audit.close \(table.go:69 -> table.go:71\) \[lock-order\]`
	a.router.hooks = nil
	a.router.mu.Unlock()
}

// Correct: the table's functions run after the lock is released.
type Mux struct {
	mu     sync.Mutex
	routes map[string]func()
}

type Client struct {
	mu  sync.Mutex
	mux *Mux
	n   int
}

func (c *Client) hit() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func NewMux(c *Client) *Mux {
	m := &Mux{routes: map[string]func(){}}
	m.routes["hit"] = c.hit
	return m
}

func (m *Mux) serve(name string) {
	m.mu.Lock()
	h := m.routes[name]
	m.mu.Unlock()
	if h != nil {
		h()
	}
}

func (c *Client) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mux.mu.Lock()
	delete(c.mux.routes, "hit")
	c.mux.mu.Unlock()
}
