package callbackparam

import "sync"

// Queue runs a caller's function over its items with its lock held.
type Queue struct {
	mu    sync.Mutex
	items []int
}

func (q *Queue) Drain(h func(int)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, it := range q.items {
		h(it)
	}
	q.items = nil
}

// With runs h once with the lock held; Update hands its function on to
// With: the same callback runs under Queue.mu.
func (q *Queue) With(h func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	h()
}

func (q *Queue) Update(h func()) { q.With(h) }

type Stats struct {
	mu  sync.Mutex
	q   *Queue
	sum int
}

func (s *Stats) add(n int) {
	s.mu.Lock()
	s.sum += n
	s.mu.Unlock()
}

// collect passes a method value: Queue.mu -> Stats.mu inside Drain.
func (s *Stats) collect() { s.q.Drain(s.add) }

// report holds Stats.mu and takes Queue.mu.
func (s *Stats) report() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.q.mu.Lock() // want `lock order inversion: Queue.mu then Stats.mu in Queue.Drain \(param.go:12 -> param.go:15 via Stats.add, passed at param.go:43\) but Stats.mu then Queue.mu in Stats.report \(param.go:47 -> param.go:49\) \[lock-order\]`
	defer s.q.mu.Unlock()
	return s.sum + len(s.q.items)
}

// A closure passed through Update locks the queue With holds.
func reentrant(q *Queue) {
	q.Update(func() { // want `Queue.mu locked again by Queue.Update -> Queue.With -> reentrant.func1 \(at param.go:57\) while held since param.go:23: self-deadlock \[double-lock\]`
		q.mu.Lock()
		q.items = append(q.items, 0)
		q.mu.Unlock()
	})
}

// The caller's lock is held while the callback runs: Log.mu -> Stats.mu.
type Log struct {
	mu   sync.Mutex
	q    *Queue
	st   *Stats
	seen int
}

func Visit(items []int, h func(int)) {
	for _, it := range items {
		h(it)
	}
}

func (l *Log) replay(items []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	Visit(items, l.st.add)
}

func (l *Log) audit() {
	l.st.mu.Lock()
	defer l.st.mu.Unlock()
	l.mu.Lock() // want `lock order inversion: Log.mu then Stats.mu in Log.replay \(param.go:78 -> param.go:80 via Visit -> Stats.add\) but Stats.mu then Log.mu in Log.audit \(param.go:84 -> param.go:86\) \[lock-order\]`
	l.seen++
	l.mu.Unlock()
}

// Correct: the callback runs after the lock is released.
type Batch struct {
	mu    sync.Mutex
	items []int
}

func (b *Batch) Drain(h func(int)) {
	b.mu.Lock()
	items := b.items
	b.items = nil
	b.mu.Unlock()
	for _, it := range items {
		h(it)
	}
}

type Totals struct {
	mu  sync.Mutex
	b   *Batch
	sum int
}

func (t *Totals) add(n int) {
	t.mu.Lock()
	t.sum += n
	t.mu.Unlock()
}

func (t *Totals) collect() { t.b.Drain(t.add) }

func (t *Totals) report() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	return t.sum + len(t.b.items)
}

// Correct: a callback that takes no lock, and one that locks its own queue
// after Drain returned.
func harmless(q *Queue) int {
	n := 0
	q.Drain(func(it int) { n += it })
	q.mu.Lock()
	defer q.mu.Unlock()
	return n + len(q.items)
}
