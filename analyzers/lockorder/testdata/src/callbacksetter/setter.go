package callbacksetter

import "sync"

// Handler is called for every item pushed.
type Handler func()

// Queue calls its item handler with its lock held.
type Queue struct {
	mu     sync.Mutex
	onItem Handler
	items  []int
}

// SetOnItem stores the handler: the field holds whatever callers pass.
func (q *Queue) SetOnItem(h Handler) { q.onItem = h }

func (q *Queue) Push(n int) {
	q.mu.Lock()
	q.items = append(q.items, n)
	q.onItem()
	q.mu.Unlock()
}

type Store struct {
	mu sync.Mutex
	q  *Queue
	n  int
}

func (s *Store) record() {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
}

func NewStore(q *Queue) *Store {
	s := &Store{q: q}
	q.SetOnItem(s.record)
	return s
}

// flush pushes under its own lock while Push runs record under Queue.mu.
func (s *Store) flush() {
	s.mu.Lock()
	s.q.Push(s.n) // want `lock order inversion: Queue.mu then Store.mu in Queue.Push \(setter.go:19 -> setter.go:21 via Store.record\) but Store.mu then Queue.mu in Store.flush \(setter.go:45 -> setter.go:46 via Queue.Push\) \[lock-order\]`
	s.mu.Unlock()
}

// SafeQueue calls its handler after unlocking: no order between the two.
type SafeQueue struct {
	mu     sync.Mutex
	onItem Handler
	items  []int
}

func (q *SafeQueue) SetOnItem(h Handler) { q.onItem = h }

func (q *SafeQueue) Push(n int) {
	q.mu.Lock()
	q.items = append(q.items, n)
	h := q.onItem
	q.mu.Unlock()
	h()
}

type Counter struct {
	mu sync.Mutex
	q  *SafeQueue
	n  int
}

func (c *Counter) record() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func NewCounter(q *SafeQueue) *Counter {
	c := &Counter{q: q}
	q.SetOnItem(c.record)
	return c
}

func (c *Counter) flush() {
	c.mu.Lock()
	c.q.Push(c.n)
	c.mu.Unlock()
}
