// Modeled on containerd's pkg/kmutex: a map of reference-counted per-key
// locks; an entry is created on a miss, its refcount counts holders and
// waiters, and Unlock deletes the entry when the count drops to zero. The
// image store takes the key lock for an image ref before its own RWMutex.
//
// CORRECT: key lock -> store.mu on every path that takes both (Pull,
// Delete); List takes only store.mu. km.mu is held inside acquire (never
// while waiting for a key lock) and inside Unlock, where it only releases
// a key lock, which cannot block. The delete-on-release is safe because the
// refcount includes waiters, so no one can be waiting on a deleted entry.
package main

import (
	"fmt"
	"sync"
)

type klock struct {
	mu  sync.Mutex
	ref int // guarded by keyMutex.mu
}

type keyMutex struct {
	mu    sync.Mutex
	locks map[string]*klock
}

func newKeyMutex() *keyMutex { return &keyMutex{locks: make(map[string]*klock)} }

// acquire returns the entry for key (creating it) and takes a reference.
func (km *keyMutex) acquire(key string) *klock {
	km.mu.Lock()
	defer km.mu.Unlock()
	l, ok := km.locks[key]
	if !ok {
		l = &klock{}
		km.locks[key] = l
	}
	l.ref++
	return l
}

func (km *keyMutex) Lock(key string) { km.acquire(key).mu.Lock() }

func (km *keyMutex) Unlock(key string) {
	km.mu.Lock()
	defer km.mu.Unlock()
	l, ok := km.locks[key]
	if !ok {
		panic("kmutex: unlock of unlocked key " + key)
	}
	l.ref--
	if l.ref == 0 {
		delete(km.locks, key)
	}
	l.mu.Unlock()
}

type ImageStore struct {
	km     *keyMutex
	mu     sync.RWMutex
	images map[string]string // ref -> digest
}

func (s *ImageStore) Pull(ref, digest string) {
	s.km.Lock(ref)
	defer s.km.Unlock(ref)
	s.mu.Lock()
	s.images[ref] = digest
	s.mu.Unlock()
}

func (s *ImageStore) Delete(ref string) {
	s.km.Lock(ref)
	defer s.km.Unlock(ref)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.images, ref)
}

func (s *ImageStore) List() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.images)
}

func main() {
	s := &ImageStore{km: newKeyMutex(), images: map[string]string{}}
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ref := fmt.Sprint("docker.io/library/img:", i%3)
			s.Pull(ref, "sha256:abc")
			s.List()
			s.Delete(ref)
		}(i)
	}
	wg.Wait()
	fmt.Println(s.List(), len(s.km.locks))
}
