package guarded

import "sync"

// A new entry stored into a guarded map is found there only by code that
// holds the map's lock: while the function keeps holding it, finishing
// the entry is construction. Once the lock is let go, or when the entry
// goes somewhere unguarded, its fields need their own lock.
type Registry struct {
	mu      sync.Mutex
	entries map[string]*Entry //confined:guardedby mu
}

type Entry struct {
	mu   sync.Mutex
	kind int //confined:guardedby mu
}

func (r *Registry) add(k string) *Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := &Entry{}
	r.entries[k] = e
	e.kind = 1
	return e
}

func (r *Registry) addThenUnlock(k string) {
	r.mu.Lock()
	e := &Entry{}
	r.entries[k] = e
	r.mu.Unlock()
	e.kind = 1 // want `write to Entry.kind without holding Entry.mu \[guardedby\]`
}

func (r *Registry) addElsewhere(k string, out map[string]*Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := &Entry{}
	out[k] = e
	e.kind = 1 // want `write to Entry.kind without holding Entry.mu \[guardedby\]`
}
