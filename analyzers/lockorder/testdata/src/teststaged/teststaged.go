// Package teststaged: tests that hold a lock on purpose against the
// production order. A deadlock needs the other order running at the same
// time, on a goroutine the test starts.
package teststaged

import "sync"

// Table flushes under its own lock, then each shard's.
type Table struct {
	mu     sync.Mutex
	shards []*Shard
}

type Shard struct {
	mu   sync.Mutex
	rows int
}

func (t *Table) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.shards {
		s.mu.Lock()
		s.rows = 0
		s.mu.Unlock()
	}
}

// Index is a second table-like type for the racing test.
type Index struct {
	mu    sync.Mutex
	parts []*Part
}

type Part struct {
	mu   sync.Mutex
	keys int
}

func (x *Index) Rebuild() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range x.parts {
		p.mu.Lock()
		p.keys = 0
		p.mu.Unlock()
	}
}
