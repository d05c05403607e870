// Package readwait: a read lock held across a wait blocks the goroutine
// that would unblock it only if that goroutine write-locks, or if some
// writer can be waiting (its queued Lock makes every later RLock wait).
// And a lock handed to a goroutine started on a method that unlocks it is
// that goroutine's to release.
package readwait

import "sync"

// Index is only ever read-locked: readers never block each other.
type Index struct {
	mu    sync.RWMutex
	m     map[string]int
	reqs  chan string
	reply chan int
}

func (x *Index) serve() {
	for k := range x.reqs {
		x.mu.RLock()
		v := x.m[k]
		x.mu.RUnlock()
		x.reply <- v
	}
}

func (x *Index) start() { go x.serve() }

// lookup waits for the server while read-locked; the server only
// read-locks too. Silent.
func (x *Index) lookup(k string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	x.reqs <- k
	return <-x.reply
}

// Table has a writer: a read lock across the wait can deadlock behind it.
type Table struct {
	mu    sync.RWMutex
	m     map[string]int
	reqs  chan string
	reply chan int
}

func (t *Table) serve() {
	for k := range t.reqs {
		t.mu.RLock()
		v := t.m[k]
		t.mu.RUnlock()
		t.reply <- v
	}
}

func (t *Table) start() { go t.serve() }

func (t *Table) set(k string, v int) {
	t.mu.Lock()
	t.m[k] = v
	t.mu.Unlock()
}

func (t *Table) lookup(k string) int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	t.reqs <- k // want `Table.mu \(taken at readwait.go:\d+\) is held across a channel send; .* also takes Table.mu \(read-locked, but Table.set write-locks it: a waiting writer makes every later RLock wait\); 1 more operation blocks under this hold the same way`
	return <-t.reply
}

// Conn hands its lock to the goroutine that finishes the write.
type Conn struct {
	mu  sync.Mutex
	buf []byte
}

func (c *Conn) finish() {
	c.buf = c.buf[:0]
	c.mu.Unlock()
}

// write locks, and the finishing goroutine unlocks: no leak. Silent.
func (c *Conn) write(p []byte, async bool) {
	c.mu.Lock()
	c.buf = append(c.buf, p...)
	if async {
		go c.finish()
		return
	}
	c.finish()
}

func withRecover(fn func()) {
	defer func() { _ = recover() }()
	fn()
}

// open locks and hands the unlock to the closure a goroutine runs through
// a helper: open takes nothing for its callers. Silent.
func (c *Conn) open() error {
	c.mu.Lock()
	go withRecover(func() {
		defer c.mu.Unlock()
		c.buf = nil
	})
	return nil
}

// status locks after open. Silent.
func (c *Conn) status() int {
	if err := c.open(); err != nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.buf)
}

var _ = []any{(*Conn).status, (*Index).start, (*Index).lookup, (*Table).start, (*Table).set, (*Table).lookup, (*Conn).write}

// turns uses a mutex as a semaphore: the goroutine unlocks it to let the
// caller's next Lock through, and takes it back. Silent.
func turns(n int, work func()) {
	var h sync.Mutex
	h.Lock()
	go func() {
		for i := 0; i < n; i++ {
			h.Unlock()
			work()
			h.Lock()
		}
	}()
	for i := 0; i < n; i++ {
		h.Lock()
		work()
	}
}

// selfDeadlock never starts the goroutine that would unlock.
func selfDeadlock(work func()) {
	var h sync.Mutex
	h.Lock()
	work()
	h.Lock() // want `h locked again while held since`
}

var _ = []any{turns, selfDeadlock}
