// Package cmap provides a small RWMutex-guarded generic map.
package cmap

import "sync"

// SyncMap is a typed concurrent map. Each instance has its own lock.
type SyncMap[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

func New[K comparable, V any]() *SyncMap[K, V] {
	return &SyncMap[K, V]{m: make(map[K]V)}
}

func (s *SyncMap[K, V]) Load(k K) (V, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.m[k]
	return v, ok
}

func (s *SyncMap[K, V]) Store(k K, v V) {
	s.mu.Lock()
	s.m[k] = v
	s.mu.Unlock()
}

func (s *SyncMap[K, V]) Delete(k K) {
	s.mu.Lock()
	delete(s.m, k)
	s.mu.Unlock()
}

// Update calls fn under the write lock. fn must not use this same map.
func (s *SyncMap[K, V]) Update(k K, fn func(old V, ok bool) V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.m[k]
	s.m[k] = fn(old, ok)
}

// Range snapshots under RLock and calls fn without holding the lock, so fn
// may freely call back into the map.
func (s *SyncMap[K, V]) Range(fn func(K, V) bool) {
	s.mu.RLock()
	keys := make([]K, 0, len(s.m))
	vals := make([]V, 0, len(s.m))
	for k, v := range s.m {
		keys = append(keys, k)
		vals = append(vals, v)
	}
	s.mu.RUnlock()
	for i := range keys {
		if !fn(keys[i], vals[i]) {
			return
		}
	}
}
