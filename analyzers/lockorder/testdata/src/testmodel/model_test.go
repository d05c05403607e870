// Package testmodel is a package of _test.go files only: the code under
// test and the tests that reproduce its deadlocks live together, as a
// regression test for a shipped deadlock does. Each test function runs on
// a goroutine of its own; what it starts runs beside it. Deadlocks between
// those goroutines are reported; orders that only ever run one after the
// other on one goroutine are not.
package testmodel

import (
	"sync"
	"testing"
)

// An AB-BA between a registry and its entries, each order on a goroutine
// the test starts.

type entry struct {
	mu   sync.Mutex
	refs int
}

type registry struct {
	mu      sync.Mutex
	entries map[string]*entry
}

func (r *registry) release(name string) {
	r.mu.Lock()
	e := r.entries[name]
	r.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refs--
	if e.refs == 0 {
		r.mu.Lock()
		delete(r.entries, name)
		r.mu.Unlock()
	}
}

func (r *registry) sweep() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		e.mu.Lock() // want `lock order inversion in test code: entry.mu then registry.mu in registry.release .* but registry.mu then entry.mu in registry.sweep .*\[lock-order-test\]`
		e.refs = 0
		e.mu.Unlock()
	}
}

func TestReleaseWhileSweeping(t *testing.T) {
	r := &registry{entries: map[string]*entry{"a": {refs: 1}}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.sweep()
	}()
	r.release("a")
	<-done
}

// The same two orders run one after the other on the test's goroutine:
// nothing runs beside them. Silent.

type table struct {
	mu   sync.Mutex
	rows map[string]*row
}

type row struct {
	mu sync.Mutex
	n  int
}

func (t *table) bump(k string) {
	t.mu.Lock()
	r := t.rows[k]
	t.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if r.n > 10 {
		t.mu.Lock()
		delete(t.rows, k)
		t.mu.Unlock()
	}
}

func (t *table) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.rows {
		r.mu.Lock()
		r.n = 0
		r.mu.Unlock()
	}
}

func TestBumpThenReset(t *testing.T) {
	tb := &table{rows: map[string]*row{"a": {}}}
	tb.bump("a")
	tb.reset()
}

// Two goroutines started by WaitGroup.Go, one nested in another, take
// the two orders of a pair of locks.

type ledger struct {
	mu      sync.Mutex
	account *account
}

type account struct {
	mu     sync.Mutex
	ledger *ledger
	total  int
}

func (l *ledger) post(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.account.credit(n)
}

func (a *account) credit(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total += n
}

func (a *account) audit() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ledger.mu.Lock() // want `lock order inversion in test code: ledger.mu then account.mu in ledger.post .* but account.mu then ledger.mu in account.audit .*\[lock-order-test\]`
	a.ledger.mu.Unlock()
}

func TestPostWhileAuditing(t *testing.T) {
	a := &account{}
	l := &ledger{account: a}
	a.ledger = l
	var wg sync.WaitGroup
	wg.Go(func() {
		var inner sync.WaitGroup
		inner.Go(func() { l.post(1) })
		inner.Go(a.audit)
		inner.Wait()
	})
	wg.Wait()
}

// A recursive read lock while a goroutine the test starts write-locks:
// the writer queues behind the first RLock and the second waits for it.

type index struct {
	mu    sync.RWMutex
	names map[string]int
}

func (x *index) lookup(n string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.names[n]
}

func (x *index) both(a, b string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.lookup(a) + len(b) // want `RLock of index.mu by index.lookup .* while already read-locked .*\[double-lock\]`
}

func (x *index) add(n string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.names[n] = len(x.names)
}

func TestLookupWhileAdding(t *testing.T) {
	x := &index{names: map[string]int{}}
	go x.add("a")
	_ = x.both("a", "b")
}

// The same nesting with no writer running beside it: a read lock taken
// twice on one goroutine waits for nobody. Silent.

type catalog struct {
	mu    sync.RWMutex
	items map[string]int
}

func (c *catalog) get(n string) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.items[n]
}

func (c *catalog) pair(a, b string) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.get(a) + len(b)
}

func (c *catalog) put(n string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items[n] = len(c.items)
}

func TestPairAfterPut(t *testing.T) {
	c := &catalog{items: map[string]int{}}
	c.put("a")
	_ = c.pair("a", "b")
}

// The same nesting where the inner call rebuilds a stale cache under
// Lock after its RUnlock: the writer the outer read lock blocks is the
// call itself, on the test's own goroutine.

type seriesIndex struct {
	mu     sync.RWMutex
	byID   map[int]string
	sorted []int
}

func (s *seriesIndex) ids() []int {
	s.mu.RLock()
	if len(s.sorted) == len(s.byID) {
		ids := s.sorted
		s.mu.RUnlock()
		return ids
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sorted = s.sorted[:0]
	for id := range s.byID {
		s.sorted = append(s.sorted, id)
	}
	return s.sorted
}

func (s *seriesIndex) matching(expr string) []int {
	if expr == "" {
		return nil
	}
	return s.ids()
}

func (s *seriesIndex) select_(expr string) []int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.matching(expr) // want `RLock of seriesIndex.mu by seriesIndex.matching -> seriesIndex.ids .* while already read-locked since model_test.go:\d+: deadlocks behind a waiting writer \(the call write-locks it too, on some path\) \[double-lock\]`
}

func TestSelectAfterAdd(t *testing.T) {
	s := &seriesIndex{byID: map[int]string{1: "a"}}
	_ = s.select_("host")
}

// Its fix: the cache is rebuilt before the read lock is taken. Silent.

func (s *seriesIndex) idsLocked() []int { return s.sorted }

func (s *seriesIndex) selectRebuilt(expr string) []int {
	s.ids()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if expr == "" {
		return nil
	}
	return s.idsLocked()
}

func TestSelectRebuiltAfterAdd(t *testing.T) {
	s := &seriesIndex{byID: map[int]string{1: "a"}}
	_ = s.selectRebuilt("host")
}

// A worker holds the queue's lock while it waits for work; the test's
// own goroutine, which sends the work, takes that lock first.

type queue struct {
	mu    sync.Mutex
	work  chan int
	count int
}

func (q *queue) next() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := <-q.work // want `queue.mu \(taken at model_test.go:\d+\) is held across a channel receive; the goroutine of test TestSubmitToWaitingWorker, which would unblock it, also takes queue.mu \[blocking-held\]`
	q.count++
	return n
}

func (q *queue) Submit(n int) {
	q.mu.Lock()
	q.count--
	q.mu.Unlock()
	q.work <- n
}

func TestSubmitToWaitingWorker(t *testing.T) {
	q := &queue{work: make(chan int)}
	go q.next()
	q.Submit(1)
}

// The same worker fed by a test that sends without the lock. Silent.

type mailbox struct {
	mu    sync.Mutex
	in    chan int
	count int
}

func (m *mailbox) next() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := <-m.in
	m.count++
	return n
}

func TestSendToWaitingWorker(t *testing.T) {
	m := &mailbox{in: make(chan int)}
	go m.next()
	m.in <- 1
}
