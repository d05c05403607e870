// Pattern B. Modelled on CockroachDB's mon.BytesMonitor hierarchy: a child
// monitor, while holding its own mu, propagates reservations to its parent
// through an onGrow hook installed by the constructor. The hook locks only
// the parent's mu (a different instance); parents are fixed at creation, so
// locks are always taken child -> parent and never in the reverse order.
package main

import (
	"fmt"
	"sync"
)

type monitor struct {
	name   string
	mu     sync.Mutex
	used   int64
	peak   int64
	parent *monitor
	onGrow func(child *monitor, parent *monitor, delta int64)
}

// propagate is the only onGrow implementation: it touches parent.mu only.
func propagate(child *monitor, parent *monitor, delta int64) {
	if parent == child {
		panic("monitor is its own parent")
	}
	parent.Grow(delta)
}

func newMonitor(name string, parent *monitor) *monitor {
	m := &monitor{name: name, parent: parent}
	if parent != nil {
		m.onGrow = propagate
	}
	return m
}

// Grow adjusts usage (delta may be negative) and forwards it up the tree
// while still holding m.mu, so a parent never under-reports a child.
func (m *monitor) Grow(delta int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used += delta
	if m.used > m.peak {
		m.peak = m.used
	}
	if m.onGrow != nil {
		m.onGrow(m, m.parent, delta)
	}
}

func (m *monitor) Used() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

func main() {
	root := newMonitor("root", nil)
	sql := newMonitor("sql", root)
	kv := newMonitor("kv", root)
	sessions := []*monitor{
		newMonitor("sess1", sql), newMonitor("sess2", sql),
		newMonitor("txn1", kv), newMonitor("txn2", kv),
	}
	var wg sync.WaitGroup
	for _, s := range sessions {
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func(s *monitor) {
				defer wg.Done()
				for i := 0; i < 300; i++ {
					s.Grow(64)
					if i%2 == 1 {
						s.Grow(-128)
					}
				}
			}(s)
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			_ = root.Used() + sql.Used() + kv.Used()
		}
	}()
	wg.Wait()
	fmt.Println("root", root.Used(), "sql", sql.Used(), "kv", kv.Used(), "peak>0", root.peak > 0)
	if root.Used() != 0 {
		panic("leaked reservation")
	}
}
