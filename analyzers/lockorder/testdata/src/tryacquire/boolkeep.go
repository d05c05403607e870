package tryacquire

import "sync"

// A bool helper that locks and reports whether it kept the lock: true
// with it held, false after letting it go. Its callers hold the lock
// where it says true, as after TryLock; neither the helper's true
// returns nor its callers' unlocks are a problem.
type Limiter struct {
	mu      sync.Mutex
	stopped bool
	tokens  int
}

func (l *Limiter) lockIfRunning() bool {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return false
	}
	return true
}

func (l *Limiter) Take() bool {
	if !l.lockIfRunning() {
		return false
	}
	defer l.mu.Unlock()
	if l.tokens == 0 {
		return false
	}
	l.tokens--
	return true
}

func (l *Limiter) Refill(n int) {
	if l.lockIfRunning() {
		l.tokens += n
		l.mu.Unlock()
	}
}

// A caller that locks again where the helper kept the lock.
func (l *Limiter) Reset() {
	if l.lockIfRunning() {
		l.mu.Lock() // want `Limiter.mu locked again while held since boolkeep.go:\d+: self-deadlock \[double-lock\]`
		l.tokens = 0
		l.mu.Unlock()
	}
}
