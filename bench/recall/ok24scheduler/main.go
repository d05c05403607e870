// Pattern: a job scheduler whose worker goroutines take the scheduler mutex
// to record completions. Shutdown marks the scheduler closed and closes the
// queue under the mutex, releases it, and only then waits on the WaitGroup.
// Submit-and-wait receives from the per-job done channel after unlocking.
// A nil-checked completion hook is invoked after the mutex is released.
package main

import (
	"fmt"
	"os"
	"sync"
)

type Job struct {
	ID   int
	Work func() int
	done chan int
}

type Scheduler struct {
	mu         sync.Mutex
	queue      chan *Job
	closed     bool
	nextID     int
	running    map[int]bool
	results    map[int]int
	onComplete func(id, result int)
	wg         sync.WaitGroup
}

func NewScheduler(workers int, onComplete func(id, result int)) *Scheduler {
	s := &Scheduler{
		queue:      make(chan *Job, 64),
		running:    make(map[int]bool),
		results:    make(map[int]int),
		onComplete: onComplete,
	}
	for i := 0; i < workers; i++ {
		s.wg.Add(1)
		go s.worker()
	}
	return s
}

func (s *Scheduler) worker() {
	defer s.wg.Done()
	for job := range s.queue {
		s.mu.Lock()
		s.running[job.ID] = true
		s.mu.Unlock()

		r := job.Work()

		s.mu.Lock()
		delete(s.running, job.ID)
		s.results[job.ID] = r
		hook := s.onComplete
		s.mu.Unlock()

		if hook != nil {
			hook(job.ID, r)
		}
		job.done <- r
	}
}

func (s *Scheduler) Submit(work func() int) (*Job, bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false
	}
	s.nextID++
	job := &Job{ID: s.nextID, Work: work, done: make(chan int, 1)}
	s.mu.Unlock()
	s.queue <- job
	return job, true
}

func (s *Scheduler) Run(work func() int) (int, bool) {
	job, ok := s.Submit(work)
	if !ok {
		return 0, false
	}
	return <-job.done, true
}

func (s *Scheduler) Result(id int) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.results[id]
	return r, ok
}

func (s *Scheduler) Shutdown() int {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return len(s.results)
	}
	s.closed = true
	s.mu.Unlock()

	// Shutdown is called after all submitters have returned, so closing the
	// queue here cannot race with a send in Submit.
	close(s.queue)
	s.wg.Wait()

	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.results)
}

func main() {
	var sched *Scheduler
	var hookMu sync.Mutex
	seen := 0
	sched = NewScheduler(3, func(id, result int) {
		if r, ok := sched.Result(id); !ok || r != result {
			fmt.Println("result not recorded for", id)
		}
		hookMu.Lock()
		seen++
		hookMu.Unlock()
	})

	var clients sync.WaitGroup
	var sumMu sync.Mutex
	sum := 0
	for c := 0; c < 5; c++ {
		clients.Add(1)
		go func(c int) {
			defer clients.Done()
			for i := 1; i <= 20; i++ {
				v := i
				r, ok := sched.Run(func() int { return v * 2 })
				if ok {
					sumMu.Lock()
					sum += r
					sumMu.Unlock()
				}
			}
		}(c)
	}
	clients.Wait()

	n := sched.Shutdown()
	hookMu.Lock()
	defer hookMu.Unlock()
	if n != 100 || seen != 100 || sum != 5*420 {
		fmt.Println("unexpected", n, seen, sum)
		os.Exit(1)
	}
	fmt.Println("jobs:", n, "sum:", sum)
}
