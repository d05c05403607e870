// Pattern: per-client token-bucket rate limiter. Debugf is called under l.mu
// with operands whose String methods read an immutable Rate value and an
// atomic drop counter. Allow and Reserve release l.mu on every return path,
// including the success paths. lockIfRunning is a TryLock-style helper that
// returns holding l.mu only when it reports true.
package ok25ratelimit

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	ErrStopped  = errors.New("limiter stopped")
	ErrTooLarge = errors.New("reservation exceeds burst")
	ErrExceeded = errors.New("rate exceeded")
)

type Logger interface {
	Debugf(format string, args ...any)
}

type bufLogger struct {
	mu    sync.Mutex
	lines []string
}

func (b *bufLogger) Debugf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	b.mu.Lock()
	b.lines = append(b.lines, msg)
	b.mu.Unlock()
}

func (b *bufLogger) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.lines)
}

// Rate is immutable once the limiter is built.
type Rate struct {
	PerSec float64
	Burst  int
}

func (r Rate) String() string { return fmt.Sprintf("%.0f/s burst=%d", r.PerSec, r.Burst) }

type dropCounter struct{ n atomic.Int64 }

func (d *dropCounter) String() string { return strconv.FormatInt(d.n.Load(), 10) }

type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

type bucket struct {
	tokens float64
	last   time.Time
}

type Limiter struct {
	mu      sync.Mutex
	rate    Rate
	buckets map[string]*bucket
	stopped bool
	drops   dropCounter
	log     Logger
	now     func() time.Time
}

func NewLimiter(rate Rate, log Logger, now func() time.Time) *Limiter {
	return &Limiter{rate: rate, buckets: make(map[string]*bucket), log: log, now: now}
}

// lockIfRunning acquires l.mu and reports whether the limiter is running.
// On true the caller holds l.mu and must unlock it; on false l.mu is released.
func (l *Limiter) lockIfRunning() bool {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return false
	}
	return true
}

// bucketLocked returns the refilled bucket for client. Requires l.mu.
func (l *Limiter) bucketLocked(client string) *bucket {
	now := l.now()
	b, ok := l.buckets[client]
	if !ok {
		b = &bucket{tokens: float64(l.rate.Burst), last: now}
		l.buckets[client] = b
		return b
	}
	b.tokens += now.Sub(b.last).Seconds() * l.rate.PerSec
	if b.tokens > float64(l.rate.Burst) {
		b.tokens = float64(l.rate.Burst)
	}
	b.last = now
	return b
}

func (l *Limiter) Allow(client string) bool {
	if !l.lockIfRunning() {
		return false
	}
	b := l.bucketLocked(client)
	if b.tokens >= 1 {
		b.tokens--
		l.mu.Unlock()
		return true
	}
	l.drops.n.Add(1)
	l.log.Debugf("throttle client=%s rate=%v drops=%v", client, l.rate, &l.drops)
	l.mu.Unlock()
	return false
}

func (l *Limiter) Reserve(client string, n int) error {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return ErrStopped
	}
	if n > l.rate.Burst {
		l.log.Debugf("reserve %d > %v for %s", n, l.rate, client)
		l.mu.Unlock()
		return ErrTooLarge
	}
	b := l.bucketLocked(client)
	if b.tokens < float64(n) {
		l.mu.Unlock()
		return ErrExceeded
	}
	b.tokens -= float64(n)
	l.mu.Unlock()
	return nil
}

func (l *Limiter) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
}

func TestLimiterConcurrentClients(t *testing.T) {
	clock := &fakeClock{}
	log := &bufLogger{}
	lim := NewLimiter(Rate{PerSec: 10, Burst: 5}, log, clock.Now)
	clients := []string{"alpha", "beta", "gamma"}

	round := func() map[string]int {
		var mu sync.Mutex
		allowed := map[string]int{}
		var wg sync.WaitGroup
		for w := 0; w < 6; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					c := clients[(w+i)%len(clients)]
					if lim.Allow(c) {
						mu.Lock()
						allowed[c]++
						mu.Unlock()
					}
				}
			}(w)
		}
		wg.Wait()
		return allowed
	}

	for r := 0; r < 3; r++ {
		got := round()
		for _, c := range clients {
			if got[c] != 5 {
				t.Fatalf("round %d client %s allowed %d, want 5", r, c, got[c])
			}
		}
		clock.Advance(time.Second)
	}
	if err := lim.Reserve("alpha", 9); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Reserve(9) = %v", err)
	}
	if err := lim.Reserve("alpha", 5); err != nil {
		t.Fatalf("Reserve(5) = %v", err)
	}
	if err := lim.Reserve("alpha", 1); !errors.Is(err, ErrExceeded) {
		t.Fatalf("Reserve(1) on empty bucket = %v", err)
	}
	if lim.drops.n.Load() == 0 || log.Len() == 0 {
		t.Fatal("expected throttled requests to be logged")
	}
	lim.Stop()
	if lim.Allow("alpha") || !errors.Is(lim.Reserve("beta", 1), ErrStopped) {
		t.Fatal("limiter still admits after Stop")
	}
}
