// Pattern: circuit breaker over a rolling window. NewBreaker gives the window
// a closure that evaluates the breaker (taking b.mu) and then runs the
// nil-checked OnSample hook; the window invokes it while holding w.mu, with
// lock order window.mu -> breaker.mu everywhere. The OnEvent option receives
// Transition events while b.mu is held (the test hook only calls stateLocked)
// and Settled events after the unlock (the hook calls the locking State).
package ok25breaker

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

var ErrOpen = errors.New("circuit open")

type State int

const (
	Closed State = iota
	Open
	HalfOpen
)

type EventKind int

const (
	Transition EventKind = iota
	Settled
)

type Event struct {
	Kind     EventKind
	From, To State
}

type Settings struct {
	Threshold  float64
	MinSamples int
	Cooldown   int64
	OnEvent    func(Event)
	OnSample   func(ratio float64)
}

type window struct {
	mu       sync.Mutex
	buf      []bool
	pos, n   int
	onRecord func(w *window, failed bool, ratio float64, n int)
}

func (w *window) Record(failed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf[w.pos] = failed
	w.pos = (w.pos + 1) % len(w.buf)
	w.n = min(w.n+1, len(w.buf))
	fails := 0
	for i := 0; i < w.n; i++ {
		if w.buf[i] {
			fails++
		}
	}
	w.onRecord(w, failed, float64(fails)/float64(w.n), w.n)
}

// resetLocked requires w.mu.
func (w *window) resetLocked() { w.pos, w.n = 0, 0 }

type Breaker struct {
	st    Settings
	clock *atomic.Int64
	win   *window

	mu       sync.Mutex
	state    State
	openedAt int64
}

func NewBreaker(st Settings, clock *atomic.Int64) *Breaker {
	b := &Breaker{st: st, clock: clock}
	b.win = &window{buf: make([]bool, 16)}
	b.win.onRecord = func(w *window, failed bool, ratio float64, n int) {
		if b.evaluate(failed, ratio, n) {
			w.resetLocked()
		}
		if b.st.OnSample != nil {
			b.st.OnSample(ratio)
		}
	}
	return b
}

func (b *Breaker) emit(ev Event) {
	if b.st.OnEvent != nil {
		b.st.OnEvent(ev)
	}
}

// stateLocked requires b.mu.
func (b *Breaker) stateLocked() State { return b.state }

func (b *Breaker) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// moveLocked requires b.mu.
func (b *Breaker) moveLocked(to State) State {
	from := b.state
	b.emit(Event{Kind: Transition, From: from, To: to})
	b.state = to
	if to == Open {
		b.openedAt = b.clock.Load()
	}
	return from
}

func (b *Breaker) allow() bool {
	b.mu.Lock()
	if b.state == Open && b.clock.Load()-b.openedAt >= b.st.Cooldown {
		from := b.moveLocked(HalfOpen)
		b.mu.Unlock()
		b.emit(Event{Kind: Settled, From: from, To: HalfOpen})
		return true
	}
	ok := b.state != Open
	b.mu.Unlock()
	return ok
}

func (b *Breaker) evaluate(failed bool, ratio float64, n int) bool {
	b.mu.Lock()
	to, change := b.state, false
	switch b.state {
	case Closed:
		change = n >= b.st.MinSamples && ratio >= b.st.Threshold
		to = Open
	case HalfOpen:
		change, to = true, Closed
		if failed {
			to = Open
		}
	}
	var from State
	if change {
		from = b.moveLocked(to)
	}
	b.mu.Unlock()
	if change {
		b.emit(Event{Kind: Settled, From: from, To: to})
	}
	return change
}

func (b *Breaker) Do(fn func() error) error {
	if !b.allow() {
		return ErrOpen
	}
	err := fn()
	b.win.Record(err != nil)
	return err
}

func TestBreakerTripAndRecover(t *testing.T) {
	var clock atomic.Int64
	var samples, transitions, settled, bad, calls, rejected atomic.Int64
	var b *Breaker
	b = NewBreaker(Settings{
		Threshold: 0.5, MinSamples: 8, Cooldown: 10,
		OnSample: func(float64) { samples.Add(1); _ = b.State() },
		OnEvent: func(ev Event) {
			switch ev.Kind {
			case Transition:
				transitions.Add(1)
				if b.stateLocked() != ev.From {
					bad.Add(1)
				}
			case Settled:
				settled.Add(1)
				_ = b.State()
			}
		},
	}, &clock)

	phase := func(fail error) {
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					err := b.Do(func() error { calls.Add(1); return fail })
					if errors.Is(err, ErrOpen) {
						rejected.Add(1)
					}
				}
			}()
		}
		wg.Wait()
	}

	phase(errors.New("backend down"))
	if b.State() != Open || rejected.Load() == 0 {
		t.Fatalf("state %v rejected %d after failures", b.State(), rejected.Load())
	}
	clock.Add(10)
	phase(nil)
	if b.State() != Closed {
		t.Fatalf("state %v after recovery", b.State())
	}
	if transitions.Load() != 3 || settled.Load() != 3 || bad.Load() != 0 {
		t.Fatalf("transitions=%d settled=%d bad=%d", transitions.Load(), settled.Load(), bad.Load())
	}
	if samples.Load() != calls.Load() || calls.Load()+rejected.Load() != 160 {
		t.Fatalf("samples=%d calls=%d rejected=%d", samples.Load(), calls.Load(), rejected.Load())
	}
}
