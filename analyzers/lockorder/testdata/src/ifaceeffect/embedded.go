package ifaceeffect

import "sync"

// Lister's List runs through an Indexer: only types implementing Indexer
// are candidates, not every Lister (Queue is a Lister, never an Indexer).
type Lister interface{ List() []int }

type Indexer interface {
	Lister
	Keys() []string
}

type Queue struct {
	mu    sync.Mutex
	items []int
	owner *Informer
}

func (q *Queue) List() []int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.items
}

type table struct{ rows []int }

func (t *table) List() []int    { return t.rows }
func (t *table) Keys() []string { return nil }

var (
	_ Lister  = &Queue{}
	_ Indexer = &table{}
)

type Informer struct {
	mu      sync.Mutex
	indexer Indexer
	queue   *Queue
}

func (s *Informer) join() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.indexer.List())
}

func (q *Queue) pop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.owner.mu.Lock()
	q.owner.mu.Unlock()
}
