package testmodel

import (
	"sync"
	"testing"
	"time"
)

// Mutexes declared as local variables of a test and shared by the
// goroutines it starts: a lock's class is its variable.

func TestLocalsOppositeOrders(t *testing.T) {
	var a, b sync.Mutex
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
	}()
	go func() {
		defer wg.Done()
		b.Lock()
		a.Lock() // want `lock order inversion in test code: a then b in TestLocalsOppositeOrders.func1 .* but b then a in TestLocalsOppositeOrders.func2 .*\[lock-order-test\]`
		a.Unlock()
		b.Unlock()
	}()
	wg.Wait()
}

func TestLocalsSameOrder(t *testing.T) {
	var a, b sync.Mutex
	var wg sync.WaitGroup
	wg.Add(2)
	for range 2 {
		go func() {
			defer wg.Done()
			a.Lock()
			b.Lock()
			b.Unlock()
			a.Unlock()
		}()
	}
	wg.Wait()
}

// A goroutine holds a local mutex across a send the test receives only
// after taking that mutex.
func TestLocalHeldAcrossSend(t *testing.T) {
	var mu sync.Mutex
	ch := make(chan int)
	go func() {
		mu.Lock()
		ch <- 1 // want `mu \(taken at locals_test.go:\d+\) is held across a channel send; the goroutine of test TestLocalHeldAcrossSend, which would unblock it, also takes mu \[blocking-held\]`
		mu.Unlock()
	}()
	mu.Lock()
	<-ch // want `mu \(taken at locals_test.go:\d+\) is held across a channel receive; the goroutine started by the go statement, which would unblock it, also takes mu \[blocking-held\]`
	mu.Unlock()
}

// A mutex declared in a loop is another mutex on every iteration: what
// the test locked on the last one does not make it wait for this one's
// goroutine. Silent.
func TestLocalPerIteration(t *testing.T) {
	for range 3 {
		var mu sync.Mutex
		ch := make(chan int)
		go func() {
			mu.Lock()
			ch <- 1
			mu.Unlock()
		}()
		<-ch
		mu.Lock()
		mu.Unlock()
	}
}

// The test hands its lock to the goroutine it starts, which lets it go,
// takes it back and ends holding it once the test has stopped taking it.
// Silent.
func TestLocalHandedOver(t *testing.T) {
	var h sync.Mutex
	h.Lock()
	exit := make(chan struct{})
	go func() {
		for {
			h.Unlock()
			h.Lock()
			select {
			case exit <- struct{}{}:
				return
			default:
			}
		}
	}()
	for range 3 {
		h.Lock()
		h.Unlock()
	}
	<-exit
}

// Two readers meet at a read-locked store lock; the only writer is the
// constructor the test runs before it starts them. Silent.

type store struct {
	mu   sync.RWMutex
	rows int
}

func newStore() *store {
	s := &store{}
	s.mu.Lock()
	s.rows = 1
	s.mu.Unlock()
	return s
}

func (s *store) read() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rows
}

// txn holds the store's read lock from begin to end.
type txn struct{ s *store }

func (s *store) begin() *txn {
	s.mu.RLock()
	return &txn{s: s}
}

func (t *txn) end() { t.s.mu.RUnlock() }

func TestReadersAfterSetup(t *testing.T) {
	s := newStore()
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		tx := s.begin()
		mu.Lock()
		tx.end()
		mu.Unlock()
	}()
	go func() {
		defer wg.Done()
		time.Sleep(time.Millisecond)
		mu.Lock()
		_ = s.read()
		mu.Unlock()
	}()
	wg.Wait()
}

// The same readers with a writer the test starts beside them: the writer
// queues behind the first read lock and the second waits for it.
func (s *store) write() {
	s.mu.Lock()
	s.rows++
	s.mu.Unlock()
}

func TestReadersBesideWriter(t *testing.T) {
	s := newStore()
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		tx := s.begin()
		mu.Lock()
		tx.end()
		mu.Unlock()
	}()
	go func() {
		defer wg.Done()
		mu.Lock()
		_ = s.read() // want `lock order inversion in test code: store.mu then mu in TestReadersBesideWriter.func1 .* but mu then store.mu in TestReadersBesideWriter.func2 .*; store.mu is read-locked on both sides, so this blocks only behind a waiting writer \(store.write write-locks it\) \[lock-order-test\]`
		mu.Unlock()
	}()
	go func() {
		defer wg.Done()
		s.write()
	}()
	wg.Wait()
}

// A helper of the test sets the database up under its lock, then starts a
// compaction whose hook sends, under that lock, to the helper, which
// receives without taking it: the setup's take came before the start and
// cannot wait for the compaction. Silent.

type database struct {
	mu   sync.Mutex
	hook func()
	rows int
}

func (d *database) load() {
	d.mu.Lock()
	d.rows = 0
	d.mu.Unlock()
}

func (d *database) compact() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hook != nil {
		d.hook()
	}
	d.rows++
}

func compactDuringQuery(t *testing.T) {
	d := &database{}
	d.load()
	started := make(chan struct{})
	d.hook = func() { started <- struct{}{} }
	done := make(chan struct{})
	go func() {
		d.compact()
		close(done)
	}()
	<-started
	<-done
}

func TestCompactDuringQuery(t *testing.T) { compactDuringQuery(t) }
