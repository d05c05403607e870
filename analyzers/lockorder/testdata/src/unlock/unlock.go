package unlock

import "sync"

type T struct {
	mu sync.Mutex
	n  int
}

func (t *T) twice() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
	t.mu.Unlock() // want `T.mu unlocked but not held: it was already unlocked on every path here \[unlock-not-held\]`
}

// An unlock helper releases its caller's lock: not reported.
func (t *T) unlock() { t.mu.Unlock() }

func (t *T) useUnlock() {
	t.mu.Lock()
	t.n++
	t.unlock()
}

// Conditional lock and unlock: maybe held, not reported.
func (t *T) conditional(c bool) {
	if c {
		t.mu.Lock()
	}
	t.n++
	if c {
		t.mu.Unlock()
	}
}

// Drops the caller's read lock to write, then takes it back: no net
// effect, so the caller's RUnlock is fine.
func (t *T) upgradeInside(rw *sync.RWMutex, c bool) {
	if c {
		return
	}
	rw.RUnlock()
	defer rw.RLock()
	rw.Lock()
	t.n++
	rw.Unlock()
}

func (t *T) callsUpgrade(rw *sync.RWMutex) {
	rw.RLock()
	t.upgradeInside(rw, true)
	rw.RUnlock()
}
