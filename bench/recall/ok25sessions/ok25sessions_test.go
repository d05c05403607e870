// Pattern: session manager with an expiry hook passed to the constructor (a
// method of an auditor holding a pointer back to the manager). Sweep emits
// Expiring while m.mu is held and Expired after the unlock; the auditor calls
// liveLocked for Expiring and the locking Len for Expired. m.lock returns its
// release (defer m.lock()()); Checkout stores a session's release in a Handle
// whose End runs it before calling the locking Touch.
package ok25sessions

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

var ErrNoSession = errors.New("no such session")

type EventKind int

const (
	Expiring EventKind = iota
	Expired
)

type Event struct {
	Kind EventKind
	ID   string
}

type Session struct {
	id      string
	ttl     int64
	expires int64 // guarded by Manager.mu
	mu      sync.Mutex
	data    map[string]int
}

type Manager struct {
	mu       sync.Mutex
	sessions map[string]*Session
	clock    *atomic.Int64
	onEvent  func(Event)
}

func NewManager(clock *atomic.Int64, onEvent func(Event)) *Manager {
	return &Manager{sessions: make(map[string]*Session), clock: clock, onEvent: onEvent}
}

// lock acquires m.mu and returns the function that releases it.
func (m *Manager) lock() func() {
	m.mu.Lock()
	return m.mu.Unlock
}

// liveLocked requires m.mu.
func (m *Manager) liveLocked() int { return len(m.sessions) }

func (m *Manager) Len() int {
	defer m.lock()()
	return m.liveLocked()
}

func (m *Manager) Create(id string, ttl int64) {
	defer m.lock()()
	m.sessions[id] = &Session{id: id, ttl: ttl, expires: m.clock.Load() + ttl, data: map[string]int{}}
}

func (m *Manager) Touch(id string) {
	defer m.lock()()
	if s, ok := m.sessions[id]; ok {
		s.expires = m.clock.Load() + s.ttl
	}
}

// Handle keeps a session locked until End.
type Handle struct {
	m       *Manager
	s       *Session
	release func()
}

func (h *Handle) Incr(k string) { h.s.data[k]++ }

func (h *Handle) End() {
	if h.release == nil {
		return
	}
	h.release()
	h.release = nil
	h.m.Touch(h.s.id)
}

func (m *Manager) Checkout(id string) (*Handle, error) {
	release := m.lock()
	s, ok := m.sessions[id]
	release()
	if !ok {
		return nil, ErrNoSession
	}
	s.mu.Lock()
	return &Handle{m: m, s: s, release: s.mu.Unlock}, nil
}

func (m *Manager) Sweep() int {
	now := m.clock.Load()
	var gone []string
	m.mu.Lock()
	for id, s := range m.sessions {
		if s.expires <= now {
			m.onEvent(Event{Kind: Expiring, ID: id})
			delete(m.sessions, id)
			gone = append(gone, id)
		}
	}
	m.mu.Unlock()
	for _, id := range gone {
		m.onEvent(Event{Kind: Expired, ID: id})
	}
	return len(gone)
}

type auditor struct {
	m        *Manager
	expiring atomic.Int64
	mu       sync.Mutex
	expired  []string
}

func (a *auditor) observe(ev Event) {
	switch ev.Kind {
	case Expiring:
		if a.m.liveLocked() > 0 {
			a.expiring.Add(1)
		}
	case Expired:
		_ = a.m.Len()
		a.mu.Lock()
		a.expired = append(a.expired, ev.ID)
		a.mu.Unlock()
	}
}

func TestSessionsSweepAndCheckout(t *testing.T) {
	var clock atomic.Int64
	a := &auditor{}
	m := NewManager(&clock, a.observe)
	a.m = m

	const workers, iters = 6, 100
	stop := make(chan struct{})
	sweeper := make(chan int)
	go func() {
		total := 0
		for {
			select {
			case <-stop:
				sweeper <- total
				return
			default:
				clock.Add(1)
				total += m.Sweep()
			}
		}
	}()

	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			id := fmt.Sprintf("user-%d", w)
			m.Create(id, 1<<40)
			for i := 0; i < iters; i++ {
				h, err := m.Checkout(id)
				if err != nil {
					t.Errorf("checkout %s: %v", id, err)
					return
				}
				h.Incr("hits")
				h.End()
				if i%10 == 0 {
					m.Create(fmt.Sprintf("tmp-%d-%d", w, i), 0)
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	swept := <-sweeper
	swept += m.Sweep()

	if m.Len() != workers {
		t.Fatalf("live sessions %d, want %d", m.Len(), workers)
	}
	a.mu.Lock()
	expired := len(a.expired)
	a.mu.Unlock()
	if want := workers * iters / 10; swept != want || int(a.expiring.Load()) != want || expired != want {
		t.Fatalf("swept %d, events %d/%d, want %d", swept, a.expiring.Load(), expired, want)
	}
	for w := 0; w < workers; w++ {
		h, err := m.Checkout(fmt.Sprintf("user-%d", w))
		if err != nil || h.s.data["hits"] != iters {
			t.Fatalf("worker %d: err=%v hits=%v", w, err, h)
		}
		h.End()
	}
}
