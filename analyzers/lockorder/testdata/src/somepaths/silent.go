package somepaths

import "sync"

// Correct code: the branch that would call the locking function is one
// the holder has just ruled out, or the locking function tests its own
// state, or which function runs is not known.

type Registry struct {
	mu    sync.Mutex
	dirty bool
	m     map[string]int
	hooks []func()
}

func (r *Registry) Refresh() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m = map[string]int{}
}

func (r *Registry) refreshIfDirty() {
	if r.dirty {
		r.Refresh()
	}
}

// Clean clears the flag under the lock before the call: the holder sets
// the state the callee's branch reads.
func (r *Registry) Clean() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dirty = false
	r.refreshIfDirty()
}

type Cache struct {
	mu     sync.Mutex
	cached map[string]string
}

// get locks only on a miss: its own test of its own state.
func (c *Cache) get(k string) string {
	if v, ok := c.cached[k]; ok {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cached[k]
}

// Reload fills the cache before it reads through get.
func (c *Cache) Reload(k, v string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cached = map[string]string{k: v}
	return c.get(k)
}

// Run calls hooks under the lock on one branch; which functions they are
// is not known here (edges only).
func (r *Registry) Run(all bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if all {
		for _, h := range r.hooks {
			h()
		}
	}
}

func (r *Registry) Register() {
	r.hooks = append(r.hooks, func() { r.Refresh() })
}
