package guarded

import (
	"container/list"
	"sync"
)

// An element's address taken from a guarded slice under a read lock
// reads the slice field (the element has its own lock); a store into an
// element still writes it.
type bucket struct {
	mu sync.Mutex
	n  int
}

type Table struct {
	mu      sync.RWMutex
	buckets []bucket //confined:guardedby mu
}

func (t *Table) Bucket(i int) *bucket {
	t.mu.RLock()
	b := &t.buckets[i]
	t.mu.RUnlock()
	return b
}

func (t *Table) Reset(i int) {
	t.mu.RLock()
	t.buckets[i].n = 0 // want `write to Table.buckets with Table.mu only read-locked .*\[guardedby-write-shared\]`
	t.mu.RUnlock()
}

// A method called on a guarded struct field: a read of the field when the
// method writes nothing through its receiver (or checks its own accesses),
// a write when it stores through it.
type ring struct {
	items []int
	head  int
}

func (r *ring) peek() int { return r.items[r.head] }
func (r *ring) push(v int) {
	r.items = append(r.items, v)
}
func (r *ring) pushTwice(v int) { r.push(v); r.push(v) }

type Log struct {
	mu      sync.RWMutex
	entries ring      //confined:guardedby mu
	order   list.List //confined:guardedby mu
}

func (l *Log) Peek() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.order.Front() == nil { // another package's method: a read, as checklocks
		return 0
	}
	return l.entries.peek()
}

func (l *Log) AppendShared(v int) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	l.entries.push(v)      // want `write to Log.entries with Log.mu only read-locked .*\[guardedby-write-shared\]`
	l.entries.pushTwice(v) // want `write to Log.entries with Log.mu only read-locked .*\[guardedby-write-shared\]`
}
