// Pattern: a lease manager whose reaper goroutine takes the manager mutex on
// every tick. Expired leases are collected under the mutex and the
// nil-checked expiry hook is called only after the mutex is released, so the
// hook may call back into the locking API. Stop closes the stop channel
// under the mutex, releases it, and then waits on the WaitGroup and on a
// channel receive for the reaper's final report.
package ok24leases

import (
	"fmt"
	"sync"
	"testing"
)

type Manager struct {
	mu       sync.Mutex
	now      int64
	leases   map[string]int64 // id -> expiry tick
	onExpire func(id string)
	stop     chan struct{}
	stopped  bool
	report   chan int
	wg       sync.WaitGroup
}

func NewManager(ticks <-chan int64, onExpire func(string)) *Manager {
	m := &Manager{
		leases:   map[string]int64{},
		onExpire: onExpire,
		stop:     make(chan struct{}),
		report:   make(chan int, 1),
	}
	m.wg.Add(1)
	go m.reap(ticks)
	return m
}

func (m *Manager) Grant(id string, ttl int64) {
	m.mu.Lock()
	m.leases[id] = m.now + ttl
	m.mu.Unlock()
}

func (m *Manager) Active() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.leases)
}

func (m *Manager) reap(ticks <-chan int64) {
	defer m.wg.Done()
	total := 0
	for {
		select {
		case <-m.stop:
			m.report <- total
			return
		case now := <-ticks:
			var expired []string
			m.mu.Lock()
			m.now = now
			for id, exp := range m.leases {
				if exp <= now {
					expired = append(expired, id)
					delete(m.leases, id)
				}
			}
			m.mu.Unlock()

			total += len(expired)
			for _, id := range expired {
				if m.onExpire != nil {
					m.onExpire(id)
				}
			}
		}
	}
}

func (m *Manager) Stop() int {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return 0
	}
	m.stopped = true
	close(m.stop)
	m.mu.Unlock()

	m.wg.Wait()
	return <-m.report
}

func TestProbe(t *testing.T) {
	ticks := make(chan int64)
	var mgr *Manager
	var mu sync.Mutex
	renewed := map[string]bool{}
	expiredCount := 0

	mgr = NewManager(ticks, func(id string) {
		mu.Lock()
		expiredCount++
		again := !renewed[id] && len(id) > 0 && id[0] == 'r'
		if again {
			renewed[id] = true
		}
		mu.Unlock()
		if again {
			mgr.Grant(id, 2) // renew once, back into the manager
		}
		_ = mgr.Active()
	})

	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				prefix := "s"
				if i%2 == 0 {
					prefix = "r"
				}
				mgr.Grant(fmt.Sprintf("%s-%d-%d", prefix, g, i), int64(1+i%3))
			}
		}(g)
	}
	wg.Wait()

	for tick := int64(1); tick <= 10; tick++ {
		ticks <- tick
	}
	// One more tick to ensure the previous iteration (and its hooks) finished.
	ticks <- 11

	total := mgr.Stop()
	if total != 60 {
		t.Fatalf("expected 60 expirations, got %d", total)
	}
	if a := mgr.Active(); a != 0 {
		t.Fatalf("expected no active leases, got %d", a)
	}
	mu.Lock()
	defer mu.Unlock()
	if expiredCount != 60 || len(renewed) != 20 {
		t.Fatalf("hook saw %d expirations, %d renewals", expiredCount, len(renewed))
	}
}
