package doublelock

import "sync"

type T struct {
	mu sync.Mutex
	rw sync.RWMutex
	n  int
}

func (t *T) direct() {
	t.mu.Lock()
	t.mu.Lock() // want `T.mu locked again while held since doublelock.go:12: self-deadlock \[double-lock\]`
	t.mu.Unlock()
	t.mu.Unlock()
}

func (t *T) helper() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
}

func (t *T) middle() { t.helper() }

func (t *T) chain() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.middle() // want `T.mu locked again by T.middle -> T.helper \(at doublelock.go:19\) while held since doublelock.go:27: self-deadlock \[double-lock\]`
}

func (t *T) readTwice() {
	t.rw.RLock()
	t.rw.RLock() // want `RLock of T.rw while already read-locked since doublelock.go:33: deadlocks behind a waiting writer \[double-lock\]`
	t.rw.RUnlock()
	t.rw.RUnlock()
}

func (t *T) upgrade() {
	t.rw.RLock()
	defer t.rw.RUnlock()
	if t.n == 0 {
		t.rw.Lock() // want `Lock of T.rw while read-locked since doublelock.go:40: a read lock cannot be upgraded, this deadlocks \[lock-upgrade\]`
		t.n = 1
		t.rw.Unlock()
	}
}

// Embedded mutex: Add locks through the promoted method and calls Get,
// which locks again.
type Counter struct {
	sync.Mutex
	n int
}

func (c *Counter) Get() int {
	c.Lock()
	defer c.Unlock()
	return c.n
}

func (c *Counter) Add() {
	c.Lock()
	defer c.Unlock()
	c.n += c.Get() // want `Counter.Mutex locked again by Counter.Get \(at doublelock.go:57\) while held since doublelock.go:63: self-deadlock \[double-lock\]`
}

// Two instances of one class: no double lock (paths differ). Taken in
// the order of the arguments, they are an order by argument
// (symmetric.go): swap(x, y) and swap(y, x) at once deadlock.
func swap(a, b *T) {
	a.mu.Lock()
	b.mu.Lock() // want `lock order by argument: swap holds the T.mu of a \(doublelock.go:\d+\) and takes the T.mu of b`
	a.n, b.n = b.n, a.n
	b.mu.Unlock()
	a.mu.Unlock()
}

// Lock, unlock, lock again: fine.
func (t *T) sequential() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
}

// A goroutine started with the lock held unlocks it: locking again waits
// for it, a hand-off rather than a self-deadlock.
func handOffToGoroutine() {
	var mu sync.Mutex
	mu.Lock()
	go func() {
		mu.Unlock()
	}()
	mu.Lock()
	mu.Unlock()
}
