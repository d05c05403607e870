// Package features_revoke: commits and drains through generics, method
// values, goroutines started in loops, deferred closures and
// range-over-func loops.
package features_revoke

import (
	"iter"
	"sync"
	"time"
)

// Log is a generic consumer: drain and commit are methods of a
// type-parameterised type.
type Log[T any] struct {
	mu      sync.Mutex
	mailbox chan T
	applied []T //confined:control
}

//confined:entry
func (l *Log[T]) run(tick <-chan struct{}) {
	for range tick {
		l.mu.Lock()
		l.drain()
		l.commit() // silent: drained after the lock
		l.mu.Unlock()
	}
}

//confined:drain
func (l *Log[T]) drain() {
	for {
		select {
		case v := <-l.mailbox:
			l.applied = append(l.applied, v)
		default:
			return
		}
	}
}

//confined:commit
//confined:requires mu
func (l *Log[T]) commit() { _ = len(l.applied) }

// flushEach commits once per iteration of a range-over-func loop, the
// drain before the loop only.
//
//confined:control
func (l *Log[T]) flushEach(parts iter.Seq[int]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.drain()
	for range parts {
		l.commit() // silent: drained after the lock, the body runs on control
	}
}

// relock drains, then takes the lock again in a range-over-func body
// before committing.
//
//confined:control
func (l *Log[T]) relock(parts iter.Seq[int]) {
	l.drain()
	for range parts {
		l.mu.Lock()
		l.commit() // want `commit Log\.commit \(publishes control progress\) can run without a drain of control's mailbox after Log\.mu is taken: Log\.relock\.func1 -> Log\.commit \[commit-without-drain\]`
		l.mu.Unlock()
	}
}

// deferredLate commits from a deferred closure registered before the
// drain: a deferred call counts at the defer statement (docs/decisions.md),
// so it is reported there.
//
//confined:control
func (l *Log[T]) deferredLate() {
	l.mu.Lock()
	defer func() { // want `commit Log\.commit \(publishes control progress\) can run without a drain of control's mailbox after Log\.mu is taken: Log\.deferredLate -> Log\.deferredLate\.func1 -> Log\.commit \[commit-without-drain\]`
		l.commit()
		l.mu.Unlock()
	}()
	l.drain()
}

//confined:control
func (l *Log[T]) deferredOK() {
	l.mu.Lock()
	l.drain()
	defer func() {
		l.commit() // silent
		l.mu.Unlock()
	}()
}

// commitNow is handed to time.AfterFunc as a method value: it runs on
// the timer's goroutine, an inline commit.
func (l *Log[T]) commitNow() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.commit() // want `Log\.commit publishes control progress but runs inline on the goroutine started by time\.AfterFunc: Log\.commitNow -> Log\.commit;`
}

//confined:control
func (l *Log[T]) schedule() {
	time.AfterFunc(time.Second, l.commitNow)
}

// perPartition starts a goroutine per partition in a loop; each commits
// on its own goroutine.
//
//confined:control
func (l *Log[T]) perPartition(parts []int) {
	for range parts {
		go func() {
			l.mu.Lock()
			l.commit() // want `Log\.commit publishes control progress but runs inline on the goroutine started by the go statement: Log\.perPartition\.func1 -> Log\.commit;`
			l.mu.Unlock()
		}()
	}
}

func instantiate() {
	l := &Log[int]{mailbox: make(chan int, 1)}
	go l.run(nil)
}
