// Project: containers/podman (libpod), v4.7 (2023).
// Files/functions: libpod/runtime_ctr.go (Runtime.NewContainer, newContainer,
// setupContainer), libpod/lock (Manager, Locker; the in-memory manager stands
// in for the SHM lock manager shared by all podman processes),
// libpod/sqlite_state.go (SQLiteState.Volume).
// Issue: containers/podman#20313 "Deadlock between setupContainer and
// lockNamedVolume"; fixed by PR containers/podman#20329 "libpod: fix deadlock
// while parallel container create" (backported as #22059).
//
// setupContainer collects the named volumes in command-line order, locks each
// (skipping duplicates) and defers the unlocks until the container is in the
// database. Volume locks are retrieved from the lock manager by lock ID, so two
// podman processes creating containers at once take the very same locks. With
// `-v vol1:/a -v vol2:/b` in one and `-v vol2:/b -v vol1:/a` in the other, each
// holds one volume lock and waits for the other, and every later command that
// touches either volume hangs. The fix drops the volume locking from container
// creation; the database already refuses a container whose volume is gone.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrNoSuchVolume = errors.New("no such volume")

type Locker interface {
	ID() uint32
	Lock()
	Unlock()
}

type Manager interface {
	AllocateLock() (Locker, error)
	RetrieveLock(id uint32) (Locker, error)
}

type Mutex struct {
	id        uint32
	allocated bool
	lock      sync.Mutex
}

func (m *Mutex) ID() uint32 { return m.id }
func (m *Mutex) Lock()      { m.lock.Lock() }
func (m *Mutex) Unlock()    { m.lock.Unlock() }

type InMemoryManager struct {
	locks     []*Mutex
	localLock sync.Mutex
}

func (m *InMemoryManager) AllocateLock() (Locker, error) {
	m.localLock.Lock()
	defer m.localLock.Unlock()
	for _, l := range m.locks {
		if !l.allocated {
			l.allocated = true
			return l, nil
		}
	}
	return nil, errors.New("all locks have been allocated")
}

func (m *InMemoryManager) RetrieveLock(id uint32) (Locker, error) {
	if int(id) >= len(m.locks) {
		return nil, fmt.Errorf("given lock ID %d is too large", id)
	}
	return m.locks[id], nil
}

type VolumeConfig struct {
	Name   string
	LockID uint32
}

type Volume struct {
	config *VolumeConfig
	lock   Locker
}

func (v *Volume) Name() string { return v.config.Name }

type ContainerNamedVolume struct{ Name, Dest string }

type Container struct {
	id           string
	namedVolumes []*ContainerNamedVolume
	lock         Locker
}

// SQLiteState stands for the on-disk database shared by all podman processes.
type SQLiteState struct {
	volumes    map[string]*VolumeConfig
	containers sync.Map // container ID -> *Container, one row per container
}

// Volume builds a fresh Volume from the database row and retrieves its lock.
func (s *SQLiteState) Volume(r *Runtime, name string) (*Volume, error) {
	cfg, ok := s.volumes[name]
	if !ok {
		return nil, ErrNoSuchVolume
	}
	lock, err := r.lockManager.RetrieveLock(cfg.LockID)
	if err != nil {
		return nil, err
	}
	return &Volume{config: cfg, lock: lock}, nil
}

func (s *SQLiteState) AddContainer(ctr *Container) error {
	for _, v := range ctr.namedVolumes {
		if _, ok := s.volumes[v.Name]; !ok {
			return ErrNoSuchVolume
		}
	}
	s.containers.Store(ctr.id, ctr)
	return nil
}

// Runtime is one podman process.
type Runtime struct {
	lock        sync.RWMutex
	lockManager Manager
	state       *SQLiteState
}

func debugf(format string, args ...interface{}) {
	time.Sleep(20 * time.Millisecond) // the debug line goes to journald
}

func (r *Runtime) NewContainer(ctx context.Context, id string, vols []*ContainerNamedVolume) (*Container, error) {
	r.lock.Lock()
	defer r.lock.Unlock()
	return r.newContainer(ctx, &Container{id: id, namedVolumes: vols})
}

func (r *Runtime) newContainer(ctx context.Context, ctr *Container) (*Container, error) {
	return r.setupContainer(ctx, ctr)
}

func (r *Runtime) setupContainer(ctx context.Context, ctr *Container) (*Container, error) {
	var err error
	if ctr.lock, err = r.lockManager.AllocateLock(); err != nil {
		return nil, err
	}

	ctrNamedVolumes := make([]*Volume, 0, len(ctr.namedVolumes))
	for _, vol := range ctr.namedVolumes {
		dbVol, err := r.state.Volume(r, vol.Name)
		if err != nil {
			return nil, fmt.Errorf("retrieving named volume %s for new container: %w", vol.Name, err)
		}
		ctrNamedVolumes = append(ctrNamedVolumes, dbVol)
	}

	// Lock all named volumes we are adding ourself to.
	volsLocked := make(map[string]bool)
	for _, namedVol := range ctrNamedVolumes {
		toLock := namedVol
		// Don't double-lock a volume that is used more than once.
		if volsLocked[namedVol.Name()] {
			continue
		}
		volsLocked[namedVol.Name()] = true
		toLock.lock.Lock()
		defer toLock.lock.Unlock()
		debugf("locked volume %s for container %s", toLock.Name(), ctr.id)
	}

	if err := r.state.AddContainer(ctr); err != nil {
		return nil, err
	}
	return ctr, nil
}

func main() {
	shm := &InMemoryManager{locks: []*Mutex{{id: 0}, {id: 1}, {id: 2}, {id: 3}, {id: 4}}}
	state := &SQLiteState{volumes: map[string]*VolumeConfig{}}
	for _, name := range []string{"vol1", "vol2"} {
		l, _ := shm.AllocateLock()
		state.volumes[name] = &VolumeConfig{Name: name, LockID: l.ID()}
	}

	done := make(chan string)
	create := func(id string, vols ...*ContainerNamedVolume) {
		r := &Runtime{lockManager: shm, state: state} // a separate podman process
		_, err := r.NewContainer(context.Background(), id, vols)
		done <- fmt.Sprint(id, " created: ", err)
	}
	go create("ctr-a", &ContainerNamedVolume{"vol1", "/dir1"}, &ContainerNamedVolume{"vol2", "/dir2"})
	time.Sleep(5 * time.Millisecond)
	go create("ctr-b", &ContainerNamedVolume{"vol2", "/dir2"}, &ContainerNamedVolume{"vol1", "/dir1"})
	fmt.Println(<-done)
	fmt.Println(<-done)
}
