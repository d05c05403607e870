// Pattern: an order-workflow state machine created once in the test with a
// transition hook installed via SetHook. Guard events are delivered while the
// machine mutex is held and the hook only reads state through stateLocked
// (no locking); Settled events are delivered after the mutex is released and
// the hook, branching on the event kind, calls the locking State/History API
// only for those.
package ok24workflow

import (
	"fmt"
	"sync"
	"testing"
)

type State string

const (
	Pending   State = "pending"
	Paid      State = "paid"
	Shipped   State = "shipped"
	Delivered State = "delivered"
)

var next = map[State]State{Pending: Paid, Paid: Shipped, Shipped: Delivered}

type EventKind int

const (
	EventGuard EventKind = iota
	EventSettled
)

type Event struct {
	Kind     EventKind
	From, To State
}

type Machine struct {
	mu      sync.Mutex
	state   State
	history []State
	hook    func(m *Machine, ev Event) bool
}

func NewMachine() *Machine { return &Machine{state: Pending, history: []State{Pending}} }

func (m *Machine) SetHook(h func(m *Machine, ev Event) bool) {
	m.mu.Lock()
	m.hook = h
	m.mu.Unlock()
}

// stateLocked must be called with m.mu held.
func (m *Machine) stateLocked() State { return m.state }

func (m *Machine) State() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

func (m *Machine) History() []State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]State(nil), m.history...)
}

// Advance moves the machine from `from` to its successor. It fails if the
// machine is not in `from` or the hook vetoes the transition.
func (m *Machine) Advance(from State) error {
	m.mu.Lock()
	if m.state != from {
		cur := m.state
		m.mu.Unlock()
		return fmt.Errorf("not in %s (in %s)", from, cur)
	}
	to, ok := next[from]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("%s is terminal", from)
	}
	hook := m.hook
	if hook != nil && !hook(m, Event{Kind: EventGuard, From: from, To: to}) {
		m.mu.Unlock()
		return fmt.Errorf("vetoed %s->%s", from, to)
	}
	m.state = to
	m.history = append(m.history, to)
	m.mu.Unlock()

	if hook != nil {
		hook(m, Event{Kind: EventSettled, From: from, To: to})
	}
	return nil
}

func TestProbe(t *testing.T) {
	machine := NewMachine()
	var mu sync.Mutex
	var settled []string
	guards := 0

	machine.SetHook(func(m *Machine, ev Event) bool {
		switch ev.Kind {
		case EventGuard:
			mu.Lock()
			guards++
			mu.Unlock()
			return m.stateLocked() == ev.From
		case EventSettled:
			cur := m.State()
			h := m.History()
			mu.Lock()
			settled = append(settled, fmt.Sprintf("%s->%s now=%s len=%d", ev.From, ev.To, cur, len(h)))
			mu.Unlock()
		}
		return true
	})

	// Several goroutines race to push the order along; each step succeeds once.
	var wg sync.WaitGroup
	var okMu sync.Mutex
	wins := map[State]int{}
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				from := machine.State()
				if from == Delivered {
					return
				}
				if machine.Advance(from) == nil {
					okMu.Lock()
					wins[from]++
					okMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()

	if s := machine.State(); s != Delivered {
		t.Fatalf("final state %s", s)
	}
	for _, s := range []State{Pending, Paid, Shipped} {
		if wins[s] != 1 {
			t.Fatalf("step %s won %d times", s, wins[s])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(settled) != 3 || guards != 3 {
		t.Fatalf("settled=%v guards=%d", settled, guards)
	}
}
