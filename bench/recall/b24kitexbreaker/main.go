// Project: cloudwego/kitex (pkg/circuitbreak on top of gopkg/cloud/circuitbreaker)
// Bug: breaker.Fail trips the breaker and calls setState, which invokes the panel's
// BreakerStateChangeHandler while breaker.mu is still held; kitex's cbSuite handler
// logs the error rate through the Metricer (the breaker itself), re-locking breaker.mu.
// Fix: record the transition under the lock and fire the handler after unlocking.
package main

import (
	"fmt"
	"log"
	"sync"
	"time"
)

type State int32

const (
	Closed State = iota
	HalfOpen
	Open
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case HalfOpen:
		return "half-open"
	case Open:
		return "open"
	}
	return "unknown"
}

type Metricer interface {
	Failures() int64
	ErrorRate() float64
}

type StateChangeHandler func(key string, oldState, newState State, m Metricer)

type TripFunc func(successes, failures int64) bool

type Options struct {
	CoolingTimeout            time.Duration
	DetectTimeout             time.Duration
	ShouldTrip                TripFunc
	BreakerStateChangeHandler StateChangeHandler
}

type breaker struct {
	sync.Mutex
	key       string
	state     State
	successes int64
	failures  int64
	openTime  time.Time
	options   Options
}

func newBreaker(key string, opts Options) *breaker {
	return &breaker{key: key, state: Closed, options: opts}
}

func (b *breaker) Failures() int64 {
	b.Lock()
	defer b.Unlock()
	return b.failures
}

func (b *breaker) ErrorRate() float64 {
	b.Lock()
	defer b.Unlock()
	total := b.successes + b.failures
	if total == 0 {
		return 0
	}
	return float64(b.failures) / float64(total)
}

func (b *breaker) State() State {
	b.Lock()
	defer b.Unlock()
	return b.state
}

func (b *breaker) IsAllowed() bool {
	b.Lock()
	defer b.Unlock()
	if b.state == Open && time.Since(b.openTime) > b.options.CoolingTimeout {
		b.setState(HalfOpen)
	}
	return b.state != Open
}

func (b *breaker) Succeed() {
	b.Lock()
	defer b.Unlock()
	b.successes++
	if b.state == HalfOpen {
		b.successes, b.failures = 0, 0
		b.setState(Closed)
	}
}

func (b *breaker) Fail() {
	b.Lock()
	defer b.Unlock()
	b.failures++
	if b.state == HalfOpen {
		b.setState(Open)
		return
	}
	if b.state == Closed && b.options.ShouldTrip != nil && b.options.ShouldTrip(b.successes, b.failures) {
		b.setState(Open)
	}
}

func (b *breaker) setState(s State) {
	old := b.state
	b.state = s
	if s == Open {
		b.openTime = time.Now()
	}
	if h := b.options.BreakerStateChangeHandler; h != nil {
		h(b.key, old, s, b)
	}
}

type Panel interface {
	Succeed(key string)
	Fail(key string)
	IsAllowed(key string) bool
	Close()
}

type panel struct {
	mu       sync.RWMutex
	breakers map[string]*breaker
	opts     Options
}

func NewPanel(handler StateChangeHandler, opts Options) (Panel, error) {
	if opts.CoolingTimeout <= 0 {
		return nil, fmt.Errorf("circuitbreaker: invalid cooling timeout %v", opts.CoolingTimeout)
	}
	opts.BreakerStateChangeHandler = handler
	return &panel{breakers: make(map[string]*breaker), opts: opts}, nil
}

func (p *panel) getBreaker(key string) *breaker {
	p.mu.RLock()
	b, ok := p.breakers[key]
	p.mu.RUnlock()
	if ok {
		return b
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok = p.breakers[key]; !ok {
		b = newBreaker(key, p.opts)
		p.breakers[key] = b
	}
	return b
}

func (p *panel) Succeed(key string)        { p.getBreaker(key).Succeed() }
func (p *panel) Fail(key string)           { p.getBreaker(key).Fail() }
func (p *panel) IsAllowed(key string) bool { return p.getBreaker(key).IsAllowed() }
func (p *panel) Close()                    {}

type cbSuite struct {
	servicePanel Panel
}

func (s *cbSuite) onStateChange(key string, oldState, newState State, m Metricer) {
	log.Printf("circuitbreak: %s %v -> %v, errRate=%.2f failures=%d", key, oldState, newState, m.ErrorRate(), m.Failures())
}

func main() {
	s := &cbSuite{}
	p, err := NewPanel(s.onStateChange, Options{
		CoolingTimeout: time.Second,
		DetectTimeout:  5 * time.Second,
		ShouldTrip: func(succ, fail int64) bool {
			return fail >= 5 && float64(fail)/float64(succ+fail) > 0.5
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	s.servicePanel = p
	key := "echo.EchoService/Echo"
	for i := 0; i < 8; i++ {
		if !p.IsAllowed(key) {
			fmt.Println("rejected by circuit breaker at call", i)
			break
		}
		p.Fail(key)
	}
	p.Close()
}
