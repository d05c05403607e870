// Project: containers/storage (the image/layer store used by CRI-O, Podman,
// Buildah and kpod), September 2017.
// Files/functions: store.go (store.Names, store.LayerStore, ROLayerStores,
// ImageStore, ROImageStores), layers.go (layerStore.Lock/Get), images.go
// (imageStore.Lock/Get), lockfile.go (GetLockfile, lockfile.Lock).
// Issue: containers/storage#102, fixed by PR containers/storage#103
// "Fix a locking error in Store.Names()".
//
// Store.Names(id) looks an ID up among the layers, then among the images. It
// prepends the read-write layer store to the read-only ones, locks each store
// in turn and defers the unlock, so all layer stores stay locked until Names
// returns. The image half was meant to walk the read-write and read-only image
// stores but walked the layer-store slice a second time. For an ID that is not
// a layer (an image or container ID) the first loop finds nothing, and the
// second loop locks the read-write layer store again. Store.Lock goes through
// the store's Locker, a lockfile whose in-process sync.Mutex is still held by
// the first loop's deferred unlock, so the goroutine blocks on itself and the
// store is wedged for every other caller. The fix walks the image stores.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var (
	ErrLayerUnknown = errors.New("layer not known")
	ErrImageUnknown = errors.New("image not known")
)

// Locker is the interface of the per-store lock files.
type Locker interface {
	Lock()
	Unlock()
	Modified() (bool, error)
}

type lockfile struct {
	mu            sync.Mutex
	counter, seen int
}

var (
	lockfiles     = map[string]*lockfile{}
	lockfilesLock sync.Mutex
)

// GetLockfile hands out one shared lockfile per path.
func GetLockfile(path string) (Locker, error) {
	lockfilesLock.Lock()
	defer lockfilesLock.Unlock()
	if l, ok := lockfiles[path]; ok {
		return l, nil
	}
	l := &lockfile{}
	lockfiles[path] = l
	return l, nil
}

func (l *lockfile) Lock()   { l.mu.Lock() }
func (l *lockfile) Unlock() { l.mu.Unlock() }
func (l *lockfile) Modified() (bool, error) {
	m := l.seen != l.counter
	l.seen = l.counter
	return m, nil
}

type Layer struct{ Names []string }
type Image struct{ Names []string }

type ROLayerStore interface {
	Locker
	Load() error
	Get(id string) (*Layer, error)
}

type LayerStore interface{ ROLayerStore }

type ROImageStore interface {
	Locker
	Load() error
	Get(id string) (*Image, error)
}

type ImageStore interface{ ROImageStore }

type layerStore struct {
	lockfile Locker
	byid     map[string]*Layer
}

func (r *layerStore) Lock()                   { r.lockfile.Lock() }
func (r *layerStore) Unlock()                 { r.lockfile.Unlock() }
func (r *layerStore) Modified() (bool, error) { return r.lockfile.Modified() }
func (r *layerStore) Load() error             { return nil }
func (r *layerStore) Get(id string) (*Layer, error) {
	if l, ok := r.byid[id]; ok {
		return l, nil
	}
	return nil, ErrLayerUnknown
}

type imageStore struct {
	lockfile Locker
	byid     map[string]*Image
}

func (r *imageStore) Lock()                   { r.lockfile.Lock() }
func (r *imageStore) Unlock()                 { r.lockfile.Unlock() }
func (r *imageStore) Modified() (bool, error) { return r.lockfile.Modified() }
func (r *imageStore) Load() error             { return nil }
func (r *imageStore) Get(id string) (*Image, error) {
	if i, ok := r.byid[id]; ok {
		return i, nil
	}
	return nil, ErrImageUnknown
}

type store struct {
	graphLock     Locker
	layerStore    LayerStore
	roLayerStores []ROLayerStore
	imageStore    ImageStore
	roImageStores []ROImageStore
}

func (s *store) LayerStore() (LayerStore, error) {
	s.graphLock.Lock()
	defer s.graphLock.Unlock()
	return s.layerStore, nil
}

func (s *store) ROLayerStores() ([]ROLayerStore, error) { return s.roLayerStores, nil }

func (s *store) ImageStore() (ImageStore, error) {
	s.graphLock.Lock()
	defer s.graphLock.Unlock()
	return s.imageStore, nil
}

func (s *store) ROImageStores() ([]ROImageStore, error) { return s.roImageStores, nil }

func (s *store) Names(id string) ([]string, error) {
	rlstore, err := s.LayerStore()
	if err != nil {
		return nil, err
	}
	stores, err := s.ROLayerStores()
	if err != nil {
		return nil, err
	}
	stores = append([]ROLayerStore{rlstore}, stores...)
	for _, rlstore := range stores {
		rlstore.Lock()
		defer rlstore.Unlock()
		if modified, err := rlstore.Modified(); modified || err != nil {
			rlstore.Load()
		}
		if l, err := rlstore.Get(id); l != nil && err == nil {
			return l.Names, nil
		}
	}

	ristore, err := s.ImageStore()
	if err != nil {
		return nil, err
	}
	istores, err := s.ROImageStores()
	if err != nil {
		return nil, err
	}
	istores = append([]ROImageStore{ristore}, istores...)
	for _, ristore := range stores {
		ristore.Lock()
		defer ristore.Unlock()
		if modified, err := ristore.Modified(); modified || err != nil {
			ristore.Load()
		}
		if i, err := ristore.Get(id); i != nil && err == nil {
			return i.Names, nil
		}
	}
	return nil, fmt.Errorf("%w (%d layer and %d image stores)", ErrLayerUnknown, len(stores), len(istores))
}

func main() {
	lf := func(path string) Locker { l, _ := GetLockfile(path); return l }
	s := &store{
		graphLock:     lf("/var/lib/containers/storage/storage.lock"),
		layerStore:    &layerStore{lockfile: lf("/var/lib/containers/storage/overlay-layers/layers.lock"), byid: map[string]*Layer{"4e6a1c": {}}},
		roLayerStores: []ROLayerStore{&layerStore{lockfile: lf("/usr/share/containers/storage/overlay-layers/layers.lock"), byid: map[string]*Layer{}}},
		imageStore: &imageStore{lockfile: lf("/var/lib/containers/storage/overlay-images/images.lock"), byid: map[string]*Image{
			"9f2b7d": {Names: []string{"docker.io/library/busybox:latest"}},
		}},
	}
	// kpod images asks for the names of an image ID.
	names, err := s.Names("9f2b7d")
	fmt.Println("names:", names, err)
}
