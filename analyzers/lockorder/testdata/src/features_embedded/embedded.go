// Package features_embedded: promoted mutex methods of embedded
// sync.Mutex, *sync.RWMutex and embedded structs holding a mutex.
package features_embedded

import "sync"

type Registry struct {
	sync.RWMutex
	names map[string]int //confined:guardedby RWMutex
}

func (r *Registry) Lookup(n string) int {
	r.RLock()
	defer r.RUnlock()
	return r.names[n] // silent: read under the promoted RLock
}

func (r *Registry) Known(n string) bool {
	r.RLock()
	defer r.RUnlock()
	_, ok := r.names[n]
	if !ok {
		r.Lock() // want `Lock of Registry.RWMutex while read-locked since embedded.go:\d+: a read lock cannot be upgraded, this deadlocks \[lock-upgrade\]`
		r.Unlock()
	}
	return ok
}

func (r *Registry) Register(n string) {
	r.Lock()
	defer r.Unlock()
	r.names[n] = len(r.names) // silent: promoted Lock held
}

func (r *Registry) RegisterShared(n string) {
	r.RLock()
	r.names[n] = 0 // want `write to Registry.names with Registry.RWMutex only read-locked \(since embedded.go:\d+\): writes need Lock \[guardedby-write-shared\]`
	r.RUnlock()
}

type base struct {
	mu sync.Mutex
	n  int
}

func (b *base) incr() {
	b.mu.Lock()
	b.n++
	b.mu.Unlock()
}

// Service embeds base: its promoted incr locks base.mu.
type Service struct {
	base
	name string
}

func (s *Service) Touch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.incr() // want `base.mu locked again by base.incr \(at embedded.go:\d+\) while held since embedded.go:\d+: self-deadlock \[double-lock\]`
}

func (s *Service) TouchOK() {
	s.incr() // silent
	s.mu.Lock()
	s.name = "x"
	s.mu.Unlock()
}
