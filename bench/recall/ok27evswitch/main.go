package main

import (
	"fmt"
	"sync"
	"time"
)

type Event interface{ kind() string }

type ConnOpened struct{ ID int }
type ConnClosed struct{ ID int }
type StatsTick struct{ At time.Time }

func (*ConnOpened) kind() string { return "opened" }
func (*ConnClosed) kind() string { return "closed" }
func (*StatsTick) kind() string  { return "tick" }

// Monitor tracks open connections. Connection events are produced by
// methods that already hold m.mu; ticks come from a background loop that
// holds nothing.
type Monitor struct {
	mu      sync.Mutex
	open    map[int]bool
	peak    int
	samples []int
}

func NewMonitor() *Monitor { return &Monitor{open: make(map[int]bool)} }

// handle must be called with m.mu held for connection events and without
// it for *StatsTick.
func (m *Monitor) handle(ev Event) {
	switch e := ev.(type) {
	case *ConnOpened:
		m.open[e.ID] = true
		if len(m.open) > m.peak {
			m.peak = len(m.open)
		}
	case *ConnClosed:
		delete(m.open, e.ID)
	case *StatsTick:
		m.mu.Lock()
		m.samples = append(m.samples, len(m.open))
		m.mu.Unlock()
	}
}

func (m *Monitor) Opened(id int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handle(&ConnOpened{ID: id})
}

func (m *Monitor) Closed(id int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handle(&ConnClosed{ID: id})
}

func (m *Monitor) runStats(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			m.handle(&StatsTick{At: now})
		case <-stop:
			return
		}
	}
}

func main() {
	m := NewMonitor()
	stop, done := make(chan struct{}), make(chan struct{})
	go m.runStats(stop, done)

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(base int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				id := base*100 + i
				m.Opened(id)
				time.Sleep(200 * time.Microsecond)
				m.Closed(id)
			}
		}(w)
	}
	wg.Wait()
	time.Sleep(3 * time.Millisecond)
	close(stop)
	<-done

	m.mu.Lock()
	fmt.Println("open:", len(m.open), "peak:", m.peak, "have samples:", len(m.samples) > 0)
	m.mu.Unlock()
}
