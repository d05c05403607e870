// Project: moby (volume/store/store.go + github.com/moby/locker)
// Bug: VolumeStore.Create takes the per-name lock (s.locks.Lock(name)) and
// then s.globalLock inside setNamed; Dereference took s.globalLock first and
// then the per-name lock for the volume. Create vs. Dereference on the same
// volume name is an AB-BA deadlock between globalLock and the name lock.
package main

import (
	"sync"
	"time"

	"example.com/recall/moby_volume_store/locker"
)

type Volume interface{ Name() string }

type localVolume struct{ name string }

func (v *localVolume) Name() string { return v.name }

type VolumeStore struct {
	locks      *locker.Locker
	globalLock sync.RWMutex
	names      map[string]Volume
	refs       map[string]map[string]struct{}
}

func New() *VolumeStore {
	return &VolumeStore{
		locks: locker.New(),
		names: map[string]Volume{},
		refs:  map[string]map[string]struct{}{},
	}
}

func (s *VolumeStore) setNamed(v Volume, ref string) {
	s.globalLock.Lock()
	defer s.globalLock.Unlock()
	s.names[v.Name()] = v
	if s.refs[v.Name()] == nil {
		s.refs[v.Name()] = map[string]struct{}{}
	}
	s.refs[v.Name()][ref] = struct{}{}
}

func (s *VolumeStore) getNamed(name string) (Volume, bool) {
	s.globalLock.RLock()
	v, exists := s.names[name]
	s.globalLock.RUnlock()
	return v, exists
}

// Create creates a volume with the given name, or returns the existing one.
func (s *VolumeStore) Create(name, ref string) Volume {
	s.locks.Lock(name)
	defer s.locks.Unlock(name)
	v, ok := s.getNamed(name)
	if !ok {
		v = &localVolume{name: name}
	}
	s.setNamed(v, ref)
	return v
}

// Dereference removes the given ref from the volume's references.
func (s *VolumeStore) Dereference(v Volume, ref string) {
	s.globalLock.Lock()
	defer s.globalLock.Unlock()
	s.locks.Lock(v.Name())
	defer s.locks.Unlock(v.Name())
	delete(s.refs[v.Name()], ref)
}

func main() {
	s := New()
	v := s.Create("data", "c1")
	for i := 0; i < 2; i++ {
		go func() {
			for {
				s.Create("data", "c2")
			}
		}()
		go func() {
			for {
				s.Dereference(v, "c2")
			}
		}()
	}
	time.Sleep(time.Second)
}
