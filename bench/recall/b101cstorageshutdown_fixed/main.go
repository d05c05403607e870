// Project: containers/storage (store.go store.Shutdown and store.GetLayerStore, layers.go newLayerStore, lockfile.go), early 2018, used by podman/libpod, cri-o and buildah (fixed by PR #157 "Fix a lock ordering error in Shutdown()", March 2018).
// Bug: Shutdown locked the layer store's lockfile (layers.lock) and only then the big storage lock (graphLock), while GetLayerStore, called at the start of every store operation, holds graphLock and, when another process touched storage.lock, rebuilds the layer store through newLayerStore, which locks layers.lock. The lockfiles are cached per path and their Lock takes an in-process sync.Mutex, so a Shutdown racing with a reload in another goroutine deadlocks AB-BA; the fix takes graphLock before the layer store lock in Shutdown.
package main

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// A Locker is a file lock that also records the last writer.
type Locker interface {
	sync.Locker
	Touch() error
	Modified() (bool, error)
	TouchedSince(when time.Time) bool
}

type lockfile struct {
	mu   sync.Mutex
	file string
	lw   string
	// onDisk and mtime stand in for the file's contents and mtime.
	onDisk atomic.Value
	mtime  atomic.Int64
}

var (
	lockfiles     map[string]*lockfile
	lockfilesLock sync.Mutex
)

// GetLockfile opens a lock file, creating it if necessary. Within a process
// the same Locker is returned for the same path.
func GetLockfile(path string) (Locker, error) {
	lockfilesLock.Lock()
	defer lockfilesLock.Unlock()
	if lockfiles == nil {
		lockfiles = make(map[string]*lockfile)
	}
	if locker, ok := lockfiles[filepath.Clean(path)]; ok {
		return locker, nil
	}
	locker := &lockfile{file: path, lw: "initial"}
	locker.onDisk.Store("initial")
	lockfiles[filepath.Clean(path)] = locker
	return locker, nil
}

func (l *lockfile) Lock() {
	l.mu.Lock()
	// for unix.FcntlFlock(l.fd, unix.F_SETLKW, &lk) != nil { time.Sleep(10 * time.Millisecond) }
}

func (l *lockfile) Unlock() {
	// unix.FcntlFlock(l.fd, unix.F_SETLKW, &unlock)
	l.mu.Unlock()
}

func (l *lockfile) Touch() error {
	l.lw = fmt.Sprintf("pid-%d", time.Now().UnixNano())
	l.onDisk.Store(l.lw)
	l.mtime.Store(time.Now().UnixNano())
	return nil
}

func (l *lockfile) Modified() (bool, error) {
	current := l.onDisk.Load().(string)
	modified := current != l.lw
	l.lw = current
	return modified, nil
}

func (l *lockfile) TouchedSince(when time.Time) bool { return time.Unix(0, l.mtime.Load()).After(when) }

// touchFromOtherProcess simulates another podman process writing under l.
func (l *lockfile) touchFromOtherProcess() {
	l.onDisk.Store("other-process")
	l.mtime.Store(time.Now().Add(time.Second).UnixNano())
}

type Layer struct {
	ID         string
	MountCount int
}

type LayerStore interface {
	Locker
	Load() error
	Layers() ([]Layer, error)
	Unmount(id string, force bool) (bool, error)
}

type layerStore struct {
	lockfile Locker
	layerdir string
	byid     map[string]*Layer
}

func newLayerStore(rundir string, layerdir string) (LayerStore, error) {
	lockfile, err := GetLockfile(filepath.Join(layerdir, "layers.lock"))
	if err != nil {
		return nil, err
	}
	lockfile.Lock()
	defer lockfile.Unlock()
	rlstore := layerStore{lockfile: lockfile, layerdir: layerdir, byid: make(map[string]*Layer)}
	if err := rlstore.Load(); err != nil {
		return nil, err
	}
	return &rlstore, nil
}

func (r *layerStore) Lock()                            { r.lockfile.Lock() }
func (r *layerStore) Unlock()                          { r.lockfile.Unlock() }
func (r *layerStore) Touch() error                     { return r.lockfile.Touch() }
func (r *layerStore) Modified() (bool, error)          { return r.lockfile.Modified() }
func (r *layerStore) TouchedSince(when time.Time) bool { return r.lockfile.TouchedSince(when) }

// Load reads layers.json and mountpoints.json.
func (r *layerStore) Load() error {
	time.Sleep(30 * time.Millisecond) // decode layers.json
	r.byid = map[string]*Layer{"3c7a1": {ID: "3c7a1", MountCount: 1}}
	return nil
}

func (r *layerStore) Layers() (out []Layer, err error) {
	for _, l := range r.byid {
		out = append(out, *l)
	}
	return out, nil
}

func (r *layerStore) Unmount(id string, force bool) (bool, error) {
	l := r.byid[id]
	if force {
		l.MountCount = 0
	} else if l.MountCount > 0 {
		l.MountCount--
	}
	return l.MountCount > 0, nil
}

type store struct {
	lastLoaded time.Time
	runRoot    string
	graphLock  Locker
	graphRoot  string
	layerStore LayerStore
}

func (s *store) GetLayerStore() (LayerStore, error) {
	s.graphLock.Lock()
	defer s.graphLock.Unlock()
	if s.graphLock.TouchedSince(s.lastLoaded) {
		s.layerStore = nil
		s.lastLoaded = time.Now()
	}
	if s.layerStore != nil {
		return s.layerStore, nil
	}
	rls, err := newLayerStore(filepath.Join(s.runRoot, "overlay-layers"), filepath.Join(s.graphRoot, "overlay-layers"))
	if err != nil {
		return nil, err
	}
	s.layerStore = rls
	return s.layerStore, nil
}

func (s *store) Layers() ([]Layer, error) {
	rlstore, err := s.GetLayerStore()
	if err != nil {
		return nil, err
	}
	rlstore.Lock()
	defer rlstore.Unlock()
	if modified, err := rlstore.Modified(); modified || err != nil {
		rlstore.Load()
	}
	return rlstore.Layers()
}

func (s *store) Shutdown(force bool) ([]string, error) {
	mounted := []string{}
	modified := false

	rlstore, err := s.GetLayerStore()
	if err != nil {
		return mounted, err
	}

	s.graphLock.Lock()
	defer s.graphLock.Unlock()

	rlstore.Lock()
	defer rlstore.Unlock()
	if modified, err := rlstore.Modified(); modified || err != nil {
		rlstore.Load()
	}

	layers, err := rlstore.Layers()
	if err != nil {
		return mounted, err
	}
	for _, layer := range layers {
		if layer.MountCount == 0 {
			continue
		}
		mounted = append(mounted, layer.ID)
		if force {
			if _, err2 := rlstore.Unmount(layer.ID, force); err2 != nil {
				err = err2
			}
			modified = true
		}
	}
	if err == nil {
		// err = s.graphDriver.Cleanup()
		s.graphLock.Touch()
		modified = true
	}
	if modified {
		rlstore.Touch()
	}
	return mounted, err
}

func main() {
	graphLock, _ := GetLockfile("/var/lib/containers/storage/storage.lock")
	s := &store{runRoot: "/run/containers/storage", graphRoot: "/var/lib/containers/storage", graphLock: graphLock}
	if _, err := s.GetLayerStore(); err != nil {
		panic(err)
	}
	// Another podman process (a container cleanup) changed the layers.
	layersLock, _ := GetLockfile("/var/lib/containers/storage/overlay-layers/layers.lock")
	layersLock.(*lockfile).touchFromOtherProcess()

	done := make(chan struct{}, 2)
	go func() { // libpod Runtime.Shutdown(force) unmounting everything on exit
		mounted, err := s.Shutdown(true)
		fmt.Println("shutdown: unmounted", mounted, err)
		done <- struct{}{}
	}()
	time.Sleep(10 * time.Millisecond)
	// Meanwhile another process committed a change to the store (storage.lock)
	// and this process is still serving a request that lists layers.
	graphLock.(*lockfile).touchFromOtherProcess()
	go func() {
		layers, err := s.Layers()
		fmt.Println("layers:", len(layers), err)
		done <- struct{}{}
	}()
	<-done
	<-done
	fmt.Println("ok")
}
