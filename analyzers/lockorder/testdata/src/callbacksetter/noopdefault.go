package callbacksetter

import "sync"

// A hook field defaulted to a no-op and set by a functional option to
// one function runs that function once the option is given: a fan-out
// calling its onAdd hook under its lock, the hook reading the labels
// back (one conditional step: the option may not be given).
type FanOut struct {
	mu      sync.RWMutex
	outputs map[string]int
	onAdd   func(o *FanOut, label string)
}

func OptOnAdd(f func(o *FanOut, label string)) func(*FanOut) {
	return func(o *FanOut) { o.onAdd = f }
}

func NewFanOut(opts ...func(*FanOut)) *FanOut {
	o := &FanOut{outputs: map[string]int{}, onAdd: func(*FanOut, string) {}}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

func (o *FanOut) Labels() int {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return len(o.outputs)
}

func (o *FanOut) Set(label string, v int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outputs[label] = v
	o.onAdd(o, label) // want `FanOut.mu locked again by NewLabelGauge.func1 -> FanOut.Labels \(at noopdefault.go:\d+, on the paths that call FanOut.Labels\) while held since noopdefault.go:\d+: self-deadlock \[double-lock\]`
}

type LabelGauge struct{ n int }

func NewLabelGauge() (*FanOut, *LabelGauge) {
	g := &LabelGauge{}
	return NewFanOut(OptOnAdd(func(o *FanOut, _ string) { g.n = o.Labels() })), g
}
