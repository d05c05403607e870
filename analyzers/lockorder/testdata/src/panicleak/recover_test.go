package panicleak

import (
	"sync"
	"testing"
)

// A test that recovers a panic to check that it happens drops what
// panicked: nothing goes on to wait for the lock. Silent.
type Store struct {
	mu   sync.Mutex
	fail bool
}

func (s *Store) write() {
	s.mu.Lock()
	if s.fail {
		panic("injected fault")
	}
	s.mu.Unlock()
}

func TestWritePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	(&Store{fail: true}).write()
}
