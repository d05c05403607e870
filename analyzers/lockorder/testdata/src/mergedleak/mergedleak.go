// Package mergedleak: a lock taken for sure and released on some paths
// only, where the paths merge before a single return, leaks on the others.
// Paths that hand the unlock to a goroutine, or defer it on some paths
// only, are not such a merge.
package mergedleak

import "sync"

type Queue struct {
	mu    sync.Mutex
	items []int
}

// drain breaks out of the loop with the lock held on the first path and
// releases it on the second: the single return leaks it.
func (q *Queue) drain(stop int) {
	q.mu.Lock()
	for _, it := range q.items {
		if it == stop {
			break
		}
		if it < 0 {
			q.mu.Unlock()
			break
		}
	}
	return // want `Queue.mu taken at mergedleak.go:\d+ is still held on some paths into this return and released on others`
}

// drainOK releases on every path. Silent.
func (q *Queue) drainOK(stop int) {
	q.mu.Lock()
	for _, it := range q.items {
		if it == stop {
			q.mu.Unlock()
			return
		}
	}
	q.mu.Unlock()
}

func (q *Queue) finish() { q.mu.Unlock() }

// handOff lets a goroutine release on one path. Silent.
func (q *Queue) handOff(async bool) {
	q.mu.Lock()
	if async {
		go q.finish()
	} else {
		q.mu.Unlock()
	}
}

// readErr retakes the lock on the error path only, with a deferred
// unlock there: released on every path. Silent.
func (q *Queue) readErr(read func() error) (n int, err error) {
	q.mu.Lock()
	closed := q.items == nil
	q.mu.Unlock()
	if closed {
		return 0, nil
	}
	err = read()
	if err != nil {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.items = nil
	}
	return
}

var _ = []any{(*Queue).readErr, (*Queue).drain, (*Queue).drainOK, (*Queue).handOff}

// Worker's goroutine takes its lock through helpers and ends holding it
// on the stop path, while every other path releases it.
type Worker struct {
	mu   sync.Mutex
	n    int
	stop chan struct{}
	work chan int
}

func (w *Worker) acquire() { w.mu.Lock() }
func (w *Worker) release() { w.mu.Unlock() }

func (w *Worker) start() {
	go func() {
		for {
			w.acquire()
			select {
			case <-w.stop:
				return // want `Worker.mu taken at mergedleak.go:\d+ is still held when the goroutine started by the go statement ends: nothing releases it`
			case x := <-w.work:
				w.n += x
			}
			w.release()
		}
	}()
}

var _ = (*Worker).start

// Solo's lock is taken by its goroutine only: nobody can block on it.
// Silent.
type Solo struct {
	mu sync.Mutex
	n  int
}

func (s *Solo) start(stop chan struct{}) {
	go func() {
		s.mu.Lock()
		<-stop
		s.n++
	}()
}

var _ = (*Solo).start
