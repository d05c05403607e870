// Project: containers/storage (store.go, lockfile.go), used by podman/cri-o/buildah
// PR:      containers/storage#213 "Fix a lock inversion" (vendored by podman#1454,
// fixing podman#1146 "Podman hangs with deadlock on .../storage.lock").
//
// Bug: the store's graph lock (storage.lock) must be taken before a layer store
// lock (layers.lock); Shutdown does exactly that (graphLock, then rlstore.Lock()).
// CreateContainer instead locked the writable layer store first and only later,
// while looking up the image's top layer, called s.ROLayerStores() to get the
// read-only layer stores -- and ROLayerStores takes s.graphLock. Within one
// process each lockfile is backed by a sync.Mutex (plus an fcntl lock across
// processes), so a container creation racing with a store shutdown deadlocks:
// layers.lock -> storage.lock vs storage.lock -> layers.lock. The fix fetches the
// read-only layer stores before acquiring the layer store lock.
//
// Deadlocking acquisitions: s.graphLock.Lock() in ROLayerStores (line 92) for
// CreateContainer, and rlstore.Lock() in Shutdown (line 138).
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Locker is pkg/lockfile.Locker; lockfile pairs an in-process mutex with fcntl.
type Locker interface {
	Lock()
	Unlock()
}

type lockfile struct {
	mu     sync.Mutex
	file   string
	locked bool
}

func (l *lockfile) Lock()   { l.mu.Lock(); l.locked = true /* fcntl(F_SETLKW) */ }
func (l *lockfile) Unlock() { l.locked = false; l.mu.Unlock() }

type Layer struct{ ID, Parent string }

type ROLayerStore interface {
	Locker
	Load() error
	Get(id string) (*Layer, error)
	Layers() ([]Layer, error)
}

type LayerStore interface {
	ROLayerStore
	Create(id string, parent *Layer) (*Layer, error)
}

type layerStore struct {
	Locker
	byid map[string]*Layer
}

func (r *layerStore) Load() error { return nil /* re-read layers.json */ }
func (r *layerStore) Get(id string) (*Layer, error) {
	if l, ok := r.byid[id]; ok {
		return l, nil
	}
	return nil, errors.New("layer not known")
}
func (r *layerStore) Layers() ([]Layer, error) { return nil, nil }
func (r *layerStore) Create(id string, parent *Layer) (*Layer, error) {
	l := &Layer{ID: id, Parent: parent.ID}
	r.byid[id] = l
	return l, nil
}

type Image struct{ ID, TopLayer string }

type store struct {
	graphLock     Locker // storage.lock
	layerStore    LayerStore
	roLayerStores []ROLayerStore
	images        map[string]*Image
}

// LayerStore obtains the writable layer store, (re)loading it under the graph lock.
func (s *store) LayerStore() (LayerStore, error) {
	s.graphLock.Lock()
	defer s.graphLock.Unlock()
	return s.layerStore, nil
}

// ROLayerStores obtains the additional read-only layer stores.
func (s *store) ROLayerStores() ([]ROLayerStore, error) {
	s.graphLock.Lock()
	defer s.graphLock.Unlock()
	return s.roLayerStores, nil
}

func (s *store) CreateContainer(id, image string) (string, error) {
	rlstore, err := s.LayerStore()
	if err != nil {
		return "", err
	}
	rlstore.Lock()
	defer rlstore.Unlock()
	if err := rlstore.Load(); err != nil { // if Modified()
		return "", err
	}

	cimage := s.images[image]         // image lookup across the image stores
	time.Sleep(50 * time.Millisecond) // (reading images.json) -- lets Shutdown start
	lstores, err := s.ROLayerStores()
	if err != nil {
		return "", err
	}
	var ilayer *Layer
	for _, store := range append([]ROLayerStore{rlstore}, lstores...) {
		if store != rlstore {
			store.Lock()
			defer store.Unlock()
		}
		if ilayer, err = store.Get(cimage.TopLayer); err == nil {
			break
		}
	}
	if ilayer == nil {
		return "", err
	}
	clayer, err := rlstore.Create(id+"-layer", ilayer)
	return clayer.ID, err
}

func (s *store) Shutdown(force bool) ([]string, error) {
	rlstore, err := s.LayerStore()
	if err != nil {
		return nil, err
	}
	s.graphLock.Lock()
	defer s.graphLock.Unlock()
	rlstore.Lock()
	defer rlstore.Unlock()
	_, err = rlstore.Layers() // unmount mounted layers, then graphDriver.Cleanup()
	return nil, err
}

func main() {
	base := &Layer{ID: "base"}
	s := &store{
		graphLock:     &lockfile{file: "/var/lib/containers/storage/storage.lock"},
		layerStore:    &layerStore{Locker: &lockfile{file: "overlay-layers/layers.lock"}, byid: map[string]*Layer{"base": base}},
		roLayerStores: []ROLayerStore{&layerStore{Locker: &lockfile{file: "/usr/share/storage/overlay-layers/layers.lock"}, byid: map[string]*Layer{}}},
		images:        map[string]*Image{"fedora": {ID: "fedora", TopLayer: "base"}},
	}
	var wg sync.WaitGroup
	wg.Go(func() { l, err := s.CreateContainer("ctr1", "fedora"); fmt.Println("created", l, err) })
	wg.Go(func() { time.Sleep(20 * time.Millisecond); _, err := s.Shutdown(false); fmt.Println("shutdown", err) })
	wg.Wait()
}
