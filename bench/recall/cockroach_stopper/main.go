// Modelled on cockroach pkg/util/stop/stopper.go: tasks are counted under
// s.mu; Stop() sets quiescing, waits for in-flight tasks in a
// `for s.mu.numTasks > 0 { cond.Wait() }` loop, then detaches the slice of
// func-valued closers under the lock and runs them after releasing it, so a
// closer may call back into the stopper (e.g. IsStopped) safely.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var ErrUnavailable = errors.New("node unavailable; try another peer")

type CloserFn func()

type Stopper struct {
	mu struct {
		sync.Mutex
		quiescing bool
		stopped   bool
		numTasks  int
		closers   []CloserFn
	}
	quiesceCond *sync.Cond
}

func NewStopper() *Stopper {
	s := &Stopper{}
	s.quiesceCond = sync.NewCond(&s.mu)
	return s
}

func (s *Stopper) AddCloser(c CloserFn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.closers = append(s.mu.closers, c)
}

func (s *Stopper) IsStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.stopped
}

func (s *Stopper) RunAsyncTask(name string, f func()) error {
	s.mu.Lock()
	if s.mu.quiescing {
		s.mu.Unlock()
		return fmt.Errorf("%s: %w", name, ErrUnavailable)
	}
	s.mu.numTasks++
	s.mu.Unlock()
	go func() {
		defer s.runPostlude()
		f()
	}()
	return nil
}

func (s *Stopper) runPostlude() {
	s.mu.Lock()
	s.mu.numTasks--
	s.quiesceCond.Broadcast()
	s.mu.Unlock()
}

func (s *Stopper) Stop() {
	s.mu.Lock()
	s.mu.quiescing = true
	for s.mu.numTasks > 0 {
		s.quiesceCond.Wait()
	}
	s.mu.stopped = true
	closers := s.mu.closers
	s.mu.closers = nil
	s.mu.Unlock()

	for _, c := range closers {
		c()
	}
}

type engine struct {
	mu     sync.Mutex
	writes int
	closed bool
}

func (e *engine) write() {
	e.mu.Lock()
	e.writes++
	e.mu.Unlock()
}

func (e *engine) Close() { e.mu.Lock(); e.closed = true; e.mu.Unlock() }

func main() {
	s := NewStopper()
	eng := &engine{}
	s.AddCloser(eng.Close)
	s.AddCloser(func() { fmt.Println("closer sees stopped =", s.IsStopped()) })

	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				_ = s.RunAsyncTask(fmt.Sprintf("write-%d-%d", i, j), func() {
					eng.write()
					// nested task launched from within a task
					_ = s.RunAsyncTask("nested", eng.write)
				})
			}
		}(i)
	}
	wg.Wait()
	s.Stop()
	if err := s.RunAsyncTask("late", eng.write); err != nil {
		fmt.Println(err)
	}
	eng.mu.Lock()
	fmt.Println("writes", eng.writes, "closed", eng.closed)
	eng.mu.Unlock()
}
