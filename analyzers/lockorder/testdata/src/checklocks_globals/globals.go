// Package checklocks_globals: guards named through a package var and its
// fields (+checklocks:registry.mu), on fields and on functions.
package checklocks_globals

import "sync"

var registry struct {
	mu sync.Mutex
	// +checklocks:mu
	entries map[string]int
}

var stats struct {
	// +checklocks:registry.mu
	lookups int
}

var misses int // +checklocks:registry.mu

// +checklocks:registry.mu
func countLocked() { stats.lookups++; misses++ }

func lookup(k string) int {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	stats.lookups++
	countLocked()
	return registry.entries[k]
}

// +checklocks:registry.mu
func resetLocked() {
	registry.entries = nil
	stats.lookups = 0
}

func racyLookup(k string) int {
	stats.lookups++            // want `write to lookups without holding struct.mu \[guardedby\]`
	countLocked()              // want `call to countLocked requires struct.mu held exclusively, but it is not held here \[requires\]`
	return registry.entries[k] // want `read of entries without holding struct.mu \[guardedby\]`
}
