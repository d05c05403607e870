package guardclause

import (
	"errors"
	"fmt"
	"sync"
)

var errEmpty = errors.New("empty key")

// A lookup that refuses bad input before it locks: on every path where
// it does its work it takes the lock, so calling it with the lock held
// deadlocks whenever the key is good (moby's TruncIndex.Get after its
// empty-prefix guard).
type Index struct {
	mu  sync.Mutex
	ids map[string]string
}

func (x *Index) Get(key string) (string, error) {
	if key == "" {
		return "", errEmpty
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	id, ok := x.ids[key]
	if !ok {
		return "", fmt.Errorf("no such id: %s", key)
	}
	return id, nil
}

func (x *Index) Resolve(key string) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	id, _ := x.Get(key) // want `Index.mu locked again by Index.Get \(at guard.go:24\) while held since guard.go:34: self-deadlock \[double-lock\]`
	return id
}

// ResolveFixed looks up before it locks. Silent.
func (x *Index) ResolveFixed(key string) string {
	id, _ := x.Get(key)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ids[key] = id
	return id
}

// A lookup whose early return is a success (a cache hit answers without
// the lock) takes the lock on some of its working paths only: which one
// runs depends on state the caller may rule out. Silent.
type Cache struct {
	mu   sync.Mutex
	last string
	m    map[string]string
}

func (c *Cache) Get(key string) (string, error) {
	if key == c.last {
		return key, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key], nil
}

func (c *Cache) Refresh(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = key
	c.Get(key)
}

// An error passed on without a test may be nil: `return err` after a call
// is no failure, so the lock after it stays conditional. Silent.
func (c *Cache) load(key string) error { return nil }

func (c *Cache) Fill(key string) error {
	if err := c.load(key); key == "" {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = key
	return nil
}

func (c *Cache) Warm(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = ""
	c.Fill(key)
}
