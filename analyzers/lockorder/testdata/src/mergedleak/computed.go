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

// A lookup that returns its node locked, or nil, and the leaf it found
// under the lock, which may be nil (internal/sync's HashTrieMap.find): the
// caller unlocks only `if i != nil`, where there is a node. No object, no
// lock to keep.
type node struct {
	mu   sync.Mutex
	kids map[string]*node
	val  int
}

func (b *Backend) find(root *node, k string) (i *node, leaf *node) {
	for {
		i = root
		for d := 0; d < 4; d++ {
			next := i.kids[k[:d]]
			if next == nil {
				i = nil
				return
			}
			i = next
		}
		i.mu.Lock()
		leaf = i.kids[k] // nil when it went away meanwhile
		if i.val >= 0 {
			return
		}
		i.mu.Unlock()
	}
}

func (b *Backend) Delete(root *node, k string) bool {
	i, leaf := b.find(root, k)
	if leaf == nil {
		if i != nil {
			i.mu.Unlock()
		}
		return false
	}
	delete(i.kids, k)
	i.mu.Unlock()
	return true
}
