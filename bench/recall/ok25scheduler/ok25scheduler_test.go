// Pattern: interval job scheduler. Add and Remove release s.mu on every
// return path, including the success path. lockIfRunning is a TryLock-style
// helper that returns holding s.mu only when it reports true. Tick launches
// due jobs while holding s.mu, unlocks, then waits; each job goroutine's
// deferred cleanup calls wg.Done before taking s.mu to record the outcome.
package ok25scheduler

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	ErrStopped = errors.New("scheduler stopped")
	ErrExists  = errors.New("job exists")
	ErrInvalid = errors.New("invalid interval")
	ErrBusy    = errors.New("job running")
	ErrUnknown = errors.New("unknown job")
)

type job struct {
	name  string
	every int64
	next  int64
	fn    func() error
}

type Scheduler struct {
	mu       sync.Mutex
	jobs     map[string]*job
	running  map[string]bool
	stopped  bool
	done     int
	failures int
}

func NewScheduler() *Scheduler {
	return &Scheduler{jobs: make(map[string]*job), running: make(map[string]bool)}
}

// lockIfRunning acquires s.mu and reports whether the scheduler is running.
// On true the caller holds s.mu and must unlock it; on false s.mu is released.
func (s *Scheduler) lockIfRunning() bool {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return false
	}
	return true
}

func (s *Scheduler) Add(name string, every int64, fn func() error) error {
	if !s.lockIfRunning() {
		return ErrStopped
	}
	if every <= 0 {
		s.mu.Unlock()
		return ErrInvalid
	}
	if _, ok := s.jobs[name]; ok {
		s.mu.Unlock()
		return ErrExists
	}
	s.jobs[name] = &job{name: name, every: every, fn: fn}
	s.mu.Unlock()
	return nil
}

func (s *Scheduler) Remove(name string) error {
	s.mu.Lock()
	if _, ok := s.jobs[name]; !ok {
		s.mu.Unlock()
		return ErrUnknown
	}
	if s.running[name] {
		s.mu.Unlock()
		return ErrBusy
	}
	delete(s.jobs, name)
	s.mu.Unlock()
	return nil
}

// Tick runs every due job that is not already running and returns how many
// were launched.
func (s *Scheduler) Tick(now int64) int {
	if !s.lockIfRunning() {
		return 0
	}
	var wg sync.WaitGroup
	launched := 0
	for _, j := range s.jobs {
		if j.next > now || s.running[j.name] {
			continue
		}
		s.running[j.name] = true
		j.next = now + j.every
		launched++
		wg.Add(1)
		go func(j *job) {
			var err error
			defer func() {
				wg.Done()
				s.mu.Lock()
				s.running[j.name] = false
				s.done++
				if err != nil {
					s.failures++
				}
				s.mu.Unlock()
			}()
			err = j.fn()
		}(j)
	}
	s.mu.Unlock()
	wg.Wait()
	return launched
}

func (s *Scheduler) Stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

func (s *Scheduler) counts() (done, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done, s.failures
}

func TestSchedulerTicks(t *testing.T) {
	s := NewScheduler()
	var calls, fails atomic.Int64
	for i := 0; i < 8; i++ {
		if err := s.Add(fmt.Sprintf("job-%d", i), int64(i%3+1), func() error {
			if calls.Add(1)%5 == 0 {
				fails.Add(1)
				return errors.New("transient")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if !errors.Is(s.Add("job-0", 1, nil), ErrExists) || !errors.Is(s.Add("x", 0, nil), ErrInvalid) {
		t.Fatal("Add validation failed")
	}

	var launched atomic.Int64
	var clock atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				launched.Add(int64(s.Tick(clock.Add(1))))
				name := fmt.Sprintf("extra-%d-%d", g, i)
				if err := s.Add(name, 2, func() error { calls.Add(1); return nil }); err != nil {
					t.Error(err)
				}
				if err := s.Remove(name); err != nil && !errors.Is(err, ErrBusy) {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	s.Stop()
	if s.Tick(1<<40) != 0 || !errors.Is(s.Add("late", 1, nil), ErrStopped) {
		t.Fatal("scheduler active after Stop")
	}

	if launched.Load() != calls.Load() || calls.Load() == 0 {
		t.Fatalf("launched %d, calls %d", launched.Load(), calls.Load())
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		done, failures := s.counts()
		if int64(done) == calls.Load() && int64(failures) == fails.Load() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("done=%d failures=%d, want %d/%d", done, failures, calls.Load(), fails.Load())
		}
		time.Sleep(time.Millisecond)
	}
}
