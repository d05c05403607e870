// Package cache is a cut-down shared informer modeled on kubernetes client-go.
package cache

import "sync"

// ResourceEventHandler is implemented by controllers that watch objects.
type ResourceEventHandler interface {
	OnAdd(key string)
	OnDelete(key string)
}

// Informer keeps a local store and fans events out to handlers.
type Informer struct {
	mu       sync.Mutex
	store    map[string]bool
	handlers []ResourceEventHandler
}

// NewInformer returns an empty informer.
func NewInformer() *Informer { return &Informer{store: make(map[string]bool)} }

// AddEventHandler registers h for future events.
func (i *Informer) AddEventHandler(h ResourceEventHandler) {
	i.mu.Lock()
	i.handlers = append(i.handlers, h)
	i.mu.Unlock()
}

// Add stores key, snapshots the handlers under the lock and notifies them
// after unlocking (like sharedProcessor.distribute working on a copy).
func (i *Informer) Add(key string) {
	i.mu.Lock()
	i.store[key] = true
	hs := append([]ResourceEventHandler(nil), i.handlers...)
	i.mu.Unlock()
	for _, h := range hs {
		h.OnAdd(key)
	}
}

// Delete removes key and notifies a snapshot of the handlers after unlocking.
func (i *Informer) Delete(key string) {
	i.mu.Lock()
	delete(i.store, key)
	hs := append([]ResourceEventHandler(nil), i.handlers...)
	i.mu.Unlock()
	for _, h := range hs {
		h.OnDelete(key)
	}
}

// Len reports the number of cached objects.
func (i *Informer) Len() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return len(i.store)
}
