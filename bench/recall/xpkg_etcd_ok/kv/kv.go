// Package kv is a small key-value store modeled on etcd's mvcc backend.
package kv

import (
	"sort"
	"strings"
	"sync"
)

// Checker decides whether a user may read a key (etcd's auth layer).
type Checker interface {
	Allowed(user, key string) bool
}

// Store is a map guarded by an RWMutex.
type Store struct {
	mu      sync.RWMutex
	data    map[string]string
	checker Checker
}

// New returns a store that filters ranges through c.
func New(c Checker) *Store { return &Store{data: make(map[string]string), checker: c} }

// Put writes a key under the write lock.
func (s *Store) Put(k, v string) {
	s.mu.Lock()
	s.data[k] = v
	s.mu.Unlock()
}

// Get reads one key under the read lock.
func (s *Store) Get(k string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.data[k]
	return v, ok
}

// Range returns allowed keys with prefix; Checker runs under the read lock.
func (s *Store) Range(user, prefix string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for k := range s.data {
		if strings.HasPrefix(k, prefix) && s.checker.Allowed(user, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
