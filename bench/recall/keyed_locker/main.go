// Style: like moby pkg/locker. Per-name mutexes live in a map guarded by
// l.mu; Lock bumps a waiter count and releases l.mu *before* blocking on the
// per-name mutex, so the map lock is never held while waiting on a key lock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type lockCtr struct {
	mu      sync.Mutex
	waiters atomic.Int32
}

type Locker struct {
	mu    sync.Mutex
	locks map[string]*lockCtr
}

func New() *Locker { return &Locker{locks: make(map[string]*lockCtr)} }

func (l *Locker) Lock(name string) {
	l.mu.Lock()
	nl, ok := l.locks[name]
	if !ok {
		nl = &lockCtr{}
		l.locks[name] = nl
	}
	nl.waiters.Add(1)
	l.mu.Unlock()

	nl.mu.Lock() // may block; l.mu is not held
	nl.waiters.Add(-1)
}

func (l *Locker) Unlock(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	nl, ok := l.locks[name]
	if !ok {
		return fmt.Errorf("%s: not locked", name)
	}
	if nl.waiters.Load() == 0 {
		delete(l.locks, name)
	}
	nl.mu.Unlock()
	return nil
}

type volumeStore struct {
	locker *Locker
	mu     sync.Mutex
	refs   map[string]int
}

func (s *volumeStore) Mount(vol string) {
	s.locker.Lock(vol)
	defer s.locker.Unlock(vol)
	s.mu.Lock()
	s.refs[vol]++
	s.mu.Unlock()
}

func main() {
	s := &volumeStore{locker: New(), refs: make(map[string]int)}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				s.Mount(fmt.Sprintf("vol-%d", (w+i)%4))
			}
		}(w)
	}
	wg.Wait()
	total := 0
	for _, n := range s.refs {
		total += n
	}
	fmt.Println("mounts:", total, "leftover locks:", len(s.locker.locks))
}
