// Package handleiface: an acquire that returns a handle whose method,
// called through another package's interface, releases the lock.
package handleiface

import (
	"sync"

	"handleiface/ext"
)

type Manager struct {
	mu   sync.Mutex
	keys []string
}

type collection struct{ m *Manager }

func (c *collection) Add(k string) { c.m.keys = append(c.m.keys, k) }
func (c *collection) Finish() error {
	c.m.mu.Unlock()
	return nil
}

// Start locks the manager for the collection it returns.
func (m *Manager) Start() (ext.Collection, error) {
	m.mu.Lock()
	return &collection{m: m}, nil
}

// Collect runs one collection per key: Finish releases the lock. Silent.
func Collect(m *Manager, rounds int) {
	for i := 0; i < rounds; i++ {
		cc, err := m.Start()
		if err != nil {
			return
		}
		cc.Add("k")
		_ = cc.Finish()
	}
}

// Drop never uses the handle: the lock is still held on the next round.
func Drop(m *Manager, rounds int) {
	for i := 0; i < rounds; i++ {
		if _, err := m.Start(); err != nil { // want `Manager.mu may still be held from the previous loop iteration`
			return
		}
	}
}
