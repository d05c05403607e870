package twopaths

import "sync"

// Two fields of one object name one level when the package copies one
// into the other (badger's last level compacted into itself: nextLevel =
// thisLevel); read-locking both read-locks that level twice, which
// deadlocks behind a writer queued between the two.
type level struct {
	sync.RWMutex
	id     int
	tables []int
}

func (l *level) replace(ts []int) {
	l.Lock()
	defer l.Unlock()
	l.tables = ts
}

type compaction struct {
	this, next *level
}

func (c *compaction) lockLevels() {
	c.this.RLock()
	c.next.RLock() // want `RLock of level.RWMutex, the same lock where next is this, as the package makes it \(at siblingcopy.go:\d+\), while already read-locked since siblingcopy.go:\d+: deadlocks behind a waiting writer \[double-lock\]`
}

func (c *compaction) unlockLevels() {
	c.next.RUnlock()
	c.this.RUnlock()
}

func plan(levels []*level, i int) *compaction {
	c := &compaction{this: levels[i]}
	c.next = c.this
	if i+1 < len(levels) {
		c.next = levels[i+1]
	}
	return c
}

// The fix read-locks the second level only when it is another one: no
// double lock, and the conditional lock paired with the same test in the
// unlock is no inconsistent return. Silent.
func (c *compaction) lockLevelsFixed() {
	c.this.RLock()
	if c.this != c.next {
		c.next.RLock()
	}
}

func (c *compaction) unlockLevelsFixed() {
	if c.this != c.next {
		c.next.RUnlock()
	}
	c.this.RUnlock()
}

// Two fields of one type the package never copies into each other are
// two objects (a transfer's source and destination). Silent.
type account struct {
	mu      sync.Mutex
	balance int
}

type transfer struct {
	from, to *account
}

func (t *transfer) run(n int) {
	t.from.mu.Lock()
	defer t.from.mu.Unlock()
	t.to.mu.Lock()
	defer t.to.mu.Unlock()
	t.from.balance -= n
	t.to.balance += n
}
