package mergedleak

import (
	"sync"
	"time"
)

// A lock taken on every path and let go only under a test of a value the
// function computed itself (vault's database renewal: the unlock sits
// inside `if exp := lease.expiration(); !exp.IsZero()`): the path that
// skips the test's branch returns holding it. The lock's unlock goes
// through a func variable that is either side's unlock, as vault's
// lock upgrade leaves it.
type Backend struct {
	sync.RWMutex
	conns map[string]int
}

type lease struct{ ttl time.Duration }

func (l lease) expiration() time.Time {
	if l.ttl > 0 {
		return time.Now().Add(l.ttl)
	}
	return time.Time{}
}

func (b *Backend) Renew(name string, l lease) int {
	b.RLock()
	var unlockFunc func() = b.RUnlock
	n, ok := b.conns[name]
	if !ok {
		b.RUnlock()
		b.Lock()
		unlockFunc = b.Unlock
		b.conns[name] = 1
	}
	if exp := l.expiration(); !exp.IsZero() {
		n++
		unlockFunc()
	}
	return n // want `Backend.RWMutex taken at computed.go:\d+ is still held on some paths into this return and released on others`
}

// The fix unlocks on every path.
func (b *Backend) RenewFixed(name string, l lease) int {
	b.RLock()
	defer b.RUnlock()
	n := b.conns[name]
	if exp := l.expiration(); !exp.IsZero() {
		n++
	}
	return n
}

// sizeLocked leaves the read lock held for its caller unless told to
// let it go: the caller's choice.
func (b *Backend) sizeLocked(release bool) int {
	b.RLock()
	n := len(b.conns)
	if release {
		b.RUnlock()
	}
	return n
}

func (b *Backend) Size() int { return b.sizeLocked(true) }
