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

// Queue merges its batches in place; a flush drains them on a background
// goroutine it starts only when the queue is not flushed by hand. drain
// takes the queue's lock, then each batch's.
type Queue struct {
	mu      sync.Mutex
	manual  bool
	batches []*Batch
}

type Batch struct {
	mu   sync.Mutex
	recs int
}

func (q *Queue) Merge() {
	q.mu.Lock()
	n := len(q.batches)
	q.mu.Unlock()
	if n > 1 {
		q.maybeDrain()
	}
}

func (q *Queue) maybeDrain() {
	if q.manual {
		return
	}
	go q.drain()
}

func (q *Queue) drain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, b := range q.batches {
		b.mu.Lock()
		b.recs = 0
		b.mu.Unlock()
	}
}
