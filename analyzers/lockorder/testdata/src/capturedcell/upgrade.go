package capturedcell

import "sync"

// A read lock upgraded under a deferred literal that calls whatever
// release the variable holds by then (Vault's database backend,
// GetConnection): `unlock := b.RUnlock; defer func() { unlock() }()`,
// and on the miss path `b.RUnlock(); b.Lock(); unlock = b.Unlock`. Every
// path lets the lock go, so callers that lock it again are fine. Silent.

type Backend struct {
	sync.RWMutex
	conns map[string]int
}

func (b *Backend) Conn(name string) int {
	b.RLock()
	unlock := b.RUnlock
	defer func() { unlock() }()
	if c, ok := b.conns[name]; ok {
		return c
	}
	b.RUnlock()
	b.Lock()
	unlock = b.Unlock
	if c, ok := b.conns[name]; ok {
		return c
	}
	b.conns[name] = len(b.conns)
	return b.conns[name]
}

func (b *Backend) Clear(name string) {
	b.Lock()
	defer b.Unlock()
	delete(b.conns, name)
}

func (b *Backend) Rotate(name string) {
	b.Conn(name)
	b.Clear(name)
}

// The variable written again elsewhere (here by a closure the caller
// keeps) is not followed: what it holds at the return is unknown, and
// so is the lock's state after the call. Nothing is reported.
func (b *Backend) ConnHooked(name string, hook *func()) int {
	b.RLock()
	unlock := b.RUnlock
	defer func() { unlock() }()
	*hook = func() { unlock = func() {} }
	return b.conns[name]
}
