package callbacksetter

import "sync"

// Lessor calls its checkpointer under its lock; the checkpointer one
// program installs through the setter captured the lessor itself and
// locks it again.
type Lessor struct {
	mu sync.Mutex
	cp func(id int)
	n  int
}

func (le *Lessor) SetCheckpointer(cp func(id int)) {
	le.mu.Lock()
	defer le.mu.Unlock()
	le.cp = cp
}

func (le *Lessor) Renew(id int) {
	le.mu.Lock()
	defer le.mu.Unlock()
	if le.cp != nil {
		le.cp(id) // want `Lessor.mu locked again by StartLessor.func1 -> Lessor.Checkpoint \(at selfset.go:\d+\) while held since selfset.go:\d+: self-deadlock \[double-lock\]`
	}
}

func (le *Lessor) Checkpoint(id int) {
	le.mu.Lock()
	le.n = id
	le.mu.Unlock()
}

func StartLessor() *Lessor {
	le := &Lessor{}
	le.SetCheckpointer(func(id int) { le.Checkpoint(id) })
	return le
}

// Ticker's callback, installed the same way, records into another
// object: no lock of the ticker is taken again. Silent.
type Ticker struct {
	mu     sync.Mutex
	onTick func()
	ticks  int
}

func (t *Ticker) SetOnTick(f func()) { t.onTick = f }

func (t *Ticker) Tick() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ticks++
	t.onTick()
}

type Gauge struct {
	mu    sync.Mutex
	count int
}

func (m *Gauge) inc() {
	m.mu.Lock()
	m.count++
	m.mu.Unlock()
}

func StartTicker(m *Gauge) *Ticker {
	t := &Ticker{}
	t.SetOnTick(func() { m.inc() })
	return t
}
