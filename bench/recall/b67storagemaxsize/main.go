// Command b67storagemaxsize reproduces the shape of a lock-order deadlock
// shipped in containers/storage, the storage library of podman, buildah and
// CRI-O, reported as podman #16062 ("Podman hangs, possible deadlock") and
// fixed when containers/storage PR #1387 made getMaxSizeFromImage take the
// layer stores its caller had already locked.
//
// store.CreateContainer write-locks the layer store's lockfile (layers.lock)
// and, for a container with an automatic user namespace, calls getAutoUserNS
// -> getMaxSizeFromImage, which asks for the layer store again through
// store.LayerStore, taking the store's graph lock (storage.lock). Every other
// store entry point goes the other way: LayerStore holds the graph lock and,
// when another process has touched storage.lock, reloads the layer store
// under layers.lock. Inside one process (podman system service, CRI-O) the
// lockfiles are guarded by in-process RWMutexes.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Locker is the lockfile interface the stores are built on.
type Locker interface {
	sync.Locker
	RLock()
	RUnlock()
	Touch()
	Modified() bool
}

type lockFile struct {
	path      string
	rw        sync.RWMutex
	lastWrite atomic.Int64
	seen      atomic.Int64
}

func (l *lockFile) Lock()    { l.rw.Lock() }
func (l *lockFile) Unlock()  { l.rw.Unlock() }
func (l *lockFile) RLock()   { l.rw.RLock() }
func (l *lockFile) RUnlock() { l.rw.RUnlock() }

// Touch records a write by some process, as the lockfile's mtime would.
func (l *lockFile) Touch() { l.lastWrite.Add(1) }

func (l *lockFile) Modified() bool {
	w := l.lastWrite.Load()
	return l.seen.Swap(w) != w
}

type Layer struct {
	ID, Parent string
	UIDs, GIDs []uint32
}

type layerStore struct {
	lockfile Locker
	byid     map[string]*Layer
	loads    int
}

func (r *layerStore) startWriting() { r.lockfile.Lock() }
func (r *layerStore) stopWriting()  { r.lockfile.Unlock() }

// Get must be called with the layer store locked.
func (r *layerStore) Get(id string) (*Layer, error) {
	if l, ok := r.byid[id]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("layer not known: %s", id)
}

// reloadIfChanged re-reads layers.json under the layer store's lock.
func (r *layerStore) reloadIfChanged() {
	r.lockfile.Lock()
	defer r.lockfile.Unlock()
	r.loads++
}

type Image struct{ ID, TopLayer string }

type ContainerOptions struct {
	AutoUserNs bool
	Size       uint32
}

type store struct {
	graphLock  Locker
	layerStore *layerStore
	images     map[string]*Image
}

// LayerStore returns the read-write layer store, reloading it when the
// graph lock says another process changed the storage.
func (s *store) LayerStore() (*layerStore, error) {
	s.graphLock.Lock()
	defer s.graphLock.Unlock()
	if s.graphLock.Modified() {
		s.layerStore.reloadIfChanged()
	}
	return s.layerStore, nil
}

func (s *store) Layers() ([]*Layer, error) {
	rlstore, _ := s.LayerStore()
	rlstore.lockfile.RLock()
	defer rlstore.lockfile.RUnlock()
	var out []*Layer
	for _, l := range rlstore.byid {
		out = append(out, l)
	}
	return out, nil
}

func (s *store) CreateContainer(id, imageID string, options *ContainerOptions) (string, error) {
	rlstore, err := s.LayerStore()
	if err != nil {
		return "", err
	}
	rlstore.startWriting()
	defer rlstore.stopWriting()

	image := s.resolveImage(imageID)
	size := options.Size
	if options.AutoUserNs {
		if size, err = s.getAutoUserNS(options, image, rlstore); err != nil {
			return "", err
		}
	}
	rlstore.byid[id+"-rw"] = &Layer{ID: id + "-rw", Parent: image.TopLayer}
	return fmt.Sprintf("%s (userns size %d)", id, size), nil
}

// resolveImage stands in for reading the image's config and manifest.
func (s *store) resolveImage(imageID string) *Image {
	time.Sleep(150 * time.Millisecond)
	return s.images[imageID]
}

func (s *store) getAutoUserNS(options *ContainerOptions, image *Image, rlstore *layerStore) (uint32, error) {
	if options.Size > 0 {
		return options.Size, nil
	}
	return s.getMaxSizeFromImage(image, "", "")
}

// getMaxSizeFromImage returns the maximum ID used by the specified image.
// The layer stores must be already locked.
func (s *store) getMaxSizeFromImage(image *Image, passwdFile, groupFile string) (uint32, error) {
	lstore, err := s.LayerStore()
	if err != nil {
		return 0, err
	}
	size := uint32(0)
	for name := image.TopLayer; name != ""; {
		layer, err := lstore.Get(name)
		if err != nil {
			return 0, err
		}
		for _, id := range append(layer.UIDs, layer.GIDs...) {
			if id >= size {
				size = id + 1
			}
		}
		name = layer.Parent
	}
	return size, nil
}

func main() {
	graph := &lockFile{path: "/var/lib/containers/storage/storage.lock"}
	layers := &lockFile{path: "/var/lib/containers/storage/overlay-layers/layers.lock"}
	s := &store{
		graphLock: graph,
		layerStore: &layerStore{lockfile: layers, byid: map[string]*Layer{
			"base": {ID: "base", UIDs: []uint32{0, 999}, GIDs: []uint32{0, 999}},
			"app":  {ID: "app", Parent: "base", UIDs: []uint32{1000}, GIDs: []uint32{1000}},
		}},
		images: map[string]*Image{"fedora": {ID: "fedora", TopLayer: "app"}},
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // podman play kube: create a container with --userns=auto
		defer wg.Done()
		name, err := s.CreateContainer("web", "fedora", &ContainerOptions{AutoUserNs: true})
		fmt.Println("created", name, err)
	}()
	go func() { // podman ps, after another podman process wrote the storage
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		graph.Touch()
		l, err := s.Layers()
		fmt.Println("layers", len(l), err)
	}()
	wg.Wait()
}
