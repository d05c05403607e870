package callbacksetter

import "sync"

// A state setter that fires a handler, called by every locked method of
// the breaker: the handler reads the breaker back and locks it again.
// One problem (the setter runs the handler under the lock its callers
// hold), reported once, at the first call, with the other calls as
// related positions.
type Metricer interface{ ErrorRate() float64 }

type BreakerOptions struct {
	OnStateChange func(old, now int, m Metricer)
}

type Breaker struct {
	mu        sync.Mutex
	state     int
	fails, ok int
	opts      BreakerOptions
}

func (b *Breaker) ErrorRate() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return float64(b.fails) / float64(b.fails+b.ok+1)
}

func (b *Breaker) setState(s int) {
	old := b.state
	b.state = s
	if h := b.opts.OnStateChange; h != nil {
		h(old, s, b)
	}
}

func (b *Breaker) Succeed() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ok++
	b.setState(0) // want `Breaker.mu locked again by Breaker.setState -> NewSuite.func1 -> Breaker.ErrorRate \(at statehandler.go:\d+\) while held since statehandler.go:\d+: self-deadlock \[double-lock\]`
}

func (b *Breaker) Fail() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails++
	if b.fails > 3 {
		b.setState(1)
		return
	}
	b.setState(2)
}

type Suite struct {
	breakers map[string]*Breaker
	trips    int
}

func NewSuite() *Suite {
	s := &Suite{breakers: map[string]*Breaker{}}
	s.breakers["a"] = &Breaker{opts: BreakerOptions{OnStateChange: func(old, now int, m Metricer) {
		if m.ErrorRate() > 0.5 {
			s.trips++
		}
	}}}
	return s
}
