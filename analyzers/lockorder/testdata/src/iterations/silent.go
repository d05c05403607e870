package iterations

// Correct code: each loop takes another object's lock, or the caller's
// lock after letting it go, or a take this analysis cannot tie to the
// state that decides it.

// refreshKids locks each child's mu, not r's.
func (r *Registry) refreshKids() {
	for _, k := range r.kids {
		k.refresh("kid")
	}
}

func (r *Registry) ResetKids() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refreshKids()
}

// Released before the loop, taken again after it.
func (r *Registry) ResetUnlocked() {
	r.mu.Lock()
	r.dirty = false
	r.mu.Unlock()
	r.refreshAll()
	r.mu.Lock()
	r.dirty = true
	r.mu.Unlock()
}

// The loop runs only when the registry is dirty, which a holder of the
// lock may have ruled out: a branch, not every iteration (edges only).
func (r *Registry) refreshIfDirty() {
	if !r.dirty {
		return
	}
	for _, name := range r.names {
		r.refresh(name)
	}
}

func (r *Registry) Clean() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dirty = false
	r.refreshIfDirty()
}

// A take after a continue is on a branch of the iteration.
func (r *Registry) refreshNamed() {
	for _, name := range r.names {
		if name == "" {
			continue
		}
		r.refresh(name)
	}
}

func (r *Registry) Prune() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = nil
	r.refreshNamed()
}

// Names runs its function under the list lock only: nothing held twice.
func (r *Registry) Names() []string {
	var out []string
	r.each(func(n string) { out = append(out, n) })
	return out
}
