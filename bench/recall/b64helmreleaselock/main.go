// Shape of kubernetes/helm #2701 ("fix(tiller): remove locking system from
// storage and rely on backend", closes #2560; alternative fix #2712).
//
// Tiller's storage kept one mutex per release in releaseLocks, guarded by
// releaseLocksLock. LockRelease held releaseLocksLock while blocking on the
// release's mutex; UnlockRelease needs releaseLocksLock to find the mutex.
// A second `helm upgrade` of a release that is being upgraded waits for the
// release mutex while holding releaseLocksLock, and the first upgrade can
// then never unlock: Tiller hangs (`helm delete`, Ctrl-C, `helm delete`).
package main

import (
	"fmt"
	"sync"
	"time"
)

type Release struct {
	Name    string
	Version int
	Status  string
}

// ---- storage/driver ----

type Driver interface {
	Name() string
	Get(key string) (*Release, error)
	List(filter func(*Release) bool) ([]*Release, error)
	Create(key string, rls *Release) error
}

type Memory struct {
	sync.RWMutex
	cache map[string]*Release
}

func NewMemory() *Memory         { return &Memory{cache: map[string]*Release{}} }
func (mem *Memory) Name() string { return "Memory" }

func (mem *Memory) Get(key string) (*Release, error) {
	mem.RLock()
	defer mem.RUnlock()
	if r, ok := mem.cache[key]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("release %q not found", key)
}

func (mem *Memory) List(filter func(*Release) bool) ([]*Release, error) {
	mem.RLock()
	defer mem.RUnlock()
	var ls []*Release
	for _, r := range mem.cache {
		if filter(r) {
			ls = append(ls, r)
		}
	}
	return ls, nil
}

func (mem *Memory) Create(key string, rls *Release) error {
	mem.Lock()
	defer mem.Unlock()
	mem.cache[key] = rls
	return nil
}

// ---- storage ----

type Storage struct {
	Driver
	releaseLocks     map[string]*sync.Mutex
	releaseLocksLock *sync.Mutex
}

func Init(d Driver) *Storage {
	return &Storage{Driver: d, releaseLocks: map[string]*sync.Mutex{}, releaseLocksLock: &sync.Mutex{}}
}

func (s *Storage) ListReleases() ([]*Release, error) {
	return s.Driver.List(func(*Release) bool { return true })
}

// LockRelease gains a mutually exclusive access to a release via a mutex.
func (s *Storage) LockRelease(name string) error {
	s.releaseLocksLock.Lock()
	defer s.releaseLocksLock.Unlock()
	lock, exists := s.releaseLocks[name]
	if !exists {
		releases, err := s.ListReleases()
		if err != nil {
			return err
		}
		found := false
		for _, r := range releases {
			found = found || r.Name == name
		}
		if !found {
			return fmt.Errorf("unable to lock release %s: release not found", name)
		}
		lock = &sync.Mutex{}
		s.releaseLocks[name] = lock
	}
	lock.Lock() // BUG: blocks while holding releaseLocksLock
	return nil
}

// UnlockRelease releases a mutually exclusive access to a release.
func (s *Storage) UnlockRelease(name string) {
	s.releaseLocksLock.Lock()
	defer s.releaseLocksLock.Unlock()
	if lock, exists := s.releaseLocks[name]; exists {
		lock.Unlock()
	}
}

// ---- tiller ----

type ReleaseServer struct{ releases *Storage }

func (s *ReleaseServer) UpdateRelease(name string, work time.Duration) (*Release, error) {
	if err := s.releases.LockRelease(name); err != nil {
		return nil, err
	}
	defer s.releases.UnlockRelease(name)
	cur, err := s.releases.Get(name + ".v1")
	if err != nil {
		return nil, err
	}
	time.Sleep(work) // kube client: apply manifests, wait for hooks
	return &Release{Name: cur.Name, Version: cur.Version + 1, Status: "DEPLOYED"}, nil
}

func main() {
	store := Init(NewMemory())
	store.Create("wordpress.v1", &Release{Name: "wordpress", Version: 1, Status: "DEPLOYED"})
	srv := &ReleaseServer{releases: store}

	var wg sync.WaitGroup
	upgrade := func(who string, delay, work time.Duration) {
		defer wg.Done()
		time.Sleep(delay)
		r, err := srv.UpdateRelease("wordpress", work)
		if err != nil {
			fmt.Println(who, "error:", err)
			return
		}
		fmt.Println(who, "upgraded to version", r.Version)
	}
	wg.Add(2)
	go upgrade("helm upgrade (1)", 0, 100*time.Millisecond)
	go upgrade("helm upgrade (2)", 20*time.Millisecond, 0)
	wg.Wait()
}
