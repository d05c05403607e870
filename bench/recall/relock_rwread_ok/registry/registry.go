// Package registry maps names to Handlers behind a sync.RWMutex. Dispatch
// read-locks the registry while it calls the handler and passes the
// registry itself so handlers can look up peers.
package registry

import "sync"

// Handler is implemented by importers.
type Handler interface {
	Handle(r *Registry, msg string) string
}

// Registry is a name -> Handler table.
type Registry struct {
	mu       sync.RWMutex
	handlers map[string]Handler
}

// New returns an empty Registry.
func New() *Registry { return &Registry{handlers: map[string]Handler{}} }

// Register adds h under name (write lock). Intended for start-up only.
func (r *Registry) Register(name string, h Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[name] = h
}

// Lookup returns the handler for name (read lock).
func (r *Registry) Lookup(name string) (Handler, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h, ok := r.handlers[name]
	return h, ok
}

// Dispatch calls the named handler while holding the read lock.
func (r *Registry) Dispatch(name, msg string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if h, ok := r.handlers[name]; ok {
		return h.Handle(r, msg) // under RLock
	}
	return ""
}
