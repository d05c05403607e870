// Command b70mobyvolumeprune reproduces a lock-order inversion between a
// per-name lock and a table lock, modelled on Moby's volume store
// (volume/service/store.go) and its pkg/locker name locks, no specific
// upstream bug.
//
// VolumeStore guards each volume name with s.locks.Lock(name), a mutex
// kept in a map of per-name lock counters, and guards the names/refs
// tables with s.globalLock. Create follows the store's order: it takes the
// name lock, resolves the volume through the driver, and only then, in
// setNamed, takes globalLock to record the reference. Prune walks the
// tables under globalLock and, for every unreferenced volume, takes that
// volume's name lock while still holding globalLock, the opposite order.
// When a container start re-creates an existing, unreferenced volume while
// a prune is running, Create holds the name lock and waits for globalLock,
// and Prune holds globalLock and waits for the name lock.
//
// The fix makes Prune collect candidate names under globalLock, release
// it, and then take each name lock before re-checking and purging.
//
// This is the fixed twin: Prune never holds globalLock while it waits for
// a name lock.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

type lockCtr struct {
	mu      sync.Mutex
	waiters int32
}

type Locker struct {
	mu    sync.Mutex
	locks map[string]*lockCtr
}

func NewLocker() *Locker { return &Locker{locks: make(map[string]*lockCtr)} }

func (l *Locker) Lock(name string) {
	l.mu.Lock()
	nameLock, exists := l.locks[name]
	if !exists {
		nameLock = &lockCtr{}
		l.locks[name] = nameLock
	}
	nameLock.waiters++
	l.mu.Unlock()

	nameLock.mu.Lock()

	l.mu.Lock()
	nameLock.waiters--
	l.mu.Unlock()
}

func (l *Locker) Unlock(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	nameLock, exists := l.locks[name]
	if !exists {
		return
	}
	if nameLock.waiters == 0 {
		delete(l.locks, name)
	}
	nameLock.mu.Unlock()
}

type Volume struct {
	Name   string
	Driver string
}

type VolumeStore struct {
	locks      *Locker
	globalLock sync.RWMutex
	names      map[string]*Volume
	refs       map[string]map[string]struct{}
}

func (s *VolumeStore) getNamed(name string) (*Volume, bool) {
	s.globalLock.RLock()
	defer s.globalLock.RUnlock()
	v, ok := s.names[name]
	return v, ok
}

func (s *VolumeStore) setNamed(v *Volume, ref string) {
	s.globalLock.Lock()
	defer s.globalLock.Unlock()
	s.names[v.Name] = v
	if ref != "" {
		if s.refs[v.Name] == nil {
			s.refs[v.Name] = map[string]struct{}{}
		}
		s.refs[v.Name][ref] = struct{}{}
	}
}

func (s *VolumeStore) Create(ctx context.Context, name, driver, ref string) (*Volume, error) {
	s.locks.Lock(name)
	defer s.locks.Unlock(name)
	v, err := s.create(ctx, name, driver)
	if err != nil {
		return nil, err
	}
	s.setNamed(v, ref)
	return v, nil
}

func (s *VolumeStore) create(ctx context.Context, name, driver string) (*Volume, error) {
	if v, ok := s.getNamed(name); ok {
		if v.Driver != driver {
			return nil, fmt.Errorf("volume %s exists with driver %s", name, v.Driver)
		}
		return v, s.probeDriver(ctx, v)
	}
	return &Volume{Name: name, Driver: driver}, nil
}

// probeDriver asks the volume plugin whether the volume still exists.
func (s *VolumeStore) probeDriver(ctx context.Context, v *Volume) error {
	time.Sleep(100 * time.Millisecond)
	return ctx.Err()
}

func (s *VolumeStore) purge(name string) {
	s.globalLock.Lock()
	defer s.globalLock.Unlock()
	delete(s.names, name)
	delete(s.refs, name)
}

func (s *VolumeStore) hasRefs(name string) bool {
	s.globalLock.RLock()
	defer s.globalLock.RUnlock()
	return len(s.refs[name]) > 0
}

func (s *VolumeStore) Remove(ctx context.Context, name string) error {
	s.locks.Lock(name)
	defer s.locks.Unlock(name)
	if s.hasRefs(name) {
		return fmt.Errorf("volume %s is in use", name)
	}
	s.purge(name)
	return nil
}

func (s *VolumeStore) Prune(ctx context.Context) []string {
	s.globalLock.RLock()
	var candidates []string
	for name := range s.names {
		if len(s.refs[name]) > 0 {
			continue
		}
		candidates = append(candidates, name)
	}
	s.globalLock.RUnlock()
	var pruned []string
	for _, name := range candidates {
		s.locks.Lock(name)
		if !s.hasRefs(name) {
			s.purge(name)
			pruned = append(pruned, name)
		}
		s.locks.Unlock(name)
	}
	sort.Strings(pruned)
	return pruned
}

func main() {
	s := &VolumeStore{locks: NewLocker(), names: map[string]*Volume{},
		refs: map[string]map[string]struct{}{}}
	ctx := context.Background()
	_, _ = s.Create(ctx, "pgdata", "local", "")
	_, _ = s.Create(ctx, "cache", "local", "")
	_, _ = s.Create(ctx, "scratch", "local", "")
	_ = s.Remove(ctx, "scratch")

	started := make(chan *Volume, 1)
	go func() {
		v, err := s.Create(ctx, "pgdata", "local", "c0ffee")
		if err != nil {
			fmt.Println("create:", err)
		}
		started <- v
	}()
	time.Sleep(30 * time.Millisecond)
	fmt.Println("pruned:", s.Prune(ctx))
	if v := <-started; v != nil {
		fmt.Println("container c0ffee uses volume", v.Name)
	}
}
