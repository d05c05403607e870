// Modelled on hashicorp/consul api session renewal: handleRenewResult takes
// s.mu only on the error path and is only ever called without s.mu held
// (from the renew goroutine). Destroy holds s.mu and calls the lock-free
// handleRenewErrLocked variant instead.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	errSessionNotFound = errors.New("consul: session not found")
	errServer          = errors.New("consul: unexpected response code: 500")
)

type Session struct {
	mu          sync.Mutex
	id          string
	failures    int
	invalidated bool
	lastIndex   atomic.Uint64
	doneCh      chan struct{} // closed once when invalidated
}

// handleRenewErrLocked records a renewal failure. Caller must hold s.mu.
func (s *Session) handleRenewErrLocked(err error) {
	if s.invalidated {
		return
	}
	s.failures++
	if errors.Is(err, errSessionNotFound) || s.failures >= 5 {
		s.invalidated = true
		close(s.doneCh)
	}
}

// handleRenewResult must be called WITHOUT s.mu. Only the error path locks.
func (s *Session) handleRenewResult(idx uint64, err error) {
	if err != nil {
		s.mu.Lock()
		s.handleRenewErrLocked(err)
		s.mu.Unlock()
		return
	}
	s.lastIndex.Store(idx)
}

// fakeRenew simulates the HTTP PUT /v1/session/renew call.
func fakeRenew(i int) (uint64, error) {
	if i%3 == 2 {
		return 0, fmt.Errorf("renew: %w", errServer)
	}
	return uint64(100 + i), nil
}

// RenewPeriodic is the only caller of handleRenewResult; it never holds s.mu.
func (s *Session) RenewPeriodic(stop <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-s.doneCh:
			return
		case <-time.After(200 * time.Microsecond):
		}
		idx, err := fakeRenew(i)
		s.handleRenewResult(idx, err)
	}
}

// Destroy holds s.mu and uses the Locked variant, never handleRenewResult.
func (s *Session) Destroy() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handleRenewErrLocked(errSessionNotFound)
}

func (s *Session) Invalidated() (bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.invalidated, s.failures
}

func main() {
	s := &Session{id: "adf4238a-882b-9ddc-4a9d-5b6758e4159e", doneCh: make(chan struct{})}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ { // several renewers, like multiple lock holders
		wg.Add(1)
		go func() { defer wg.Done(); s.RenewPeriodic(stop) }()
	}
	for i := 0; i < 10; i++ {
		time.Sleep(300 * time.Microsecond)
		if inv, _ := s.Invalidated(); inv {
			break
		}
	}
	s.Destroy()
	close(stop)
	wg.Wait()
	inv, failures := s.Invalidated()
	fmt.Printf("invalidated=%v failures=%d lastIndex=%d\n", inv, failures, s.lastIndex.Load())
}
