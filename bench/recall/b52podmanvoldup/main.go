// Project: containers/podman (libpod), v2.1 (autumn 2020).
// Files/functions: libpod/runtime_ctr.go (Runtime.NewContainer, newContainer,
// setupContainer), libpod/options.go (WithNamedVolumes),
// libpod/runtime_volume_linux.go (Runtime.newVolume), libpod/boltdb_state.go
// (BoltState.Volume), libpod/lock (Manager, Locker).
// Issue: containers/podman#8221 (`podman run -v vol:/a -v vol:/b` hangs);
// fixed by PR containers/podman#8307 "Ensure we do not double-lock the same
// volume in create".
//
// setupContainer looks each named volume up in the database (or creates it),
// keeps the *Volume objects in ctrNamedVolumes, then locks every one of them
// and defers the unlocks so they cannot be removed while the container is
// added. BoltState.Volume builds a new Volume on every call but retrieves its
// lock from the lock manager by lock ID, so two entries for one volume share a
// lock. A container mounting the same volume at two destinations has it twice
// in the list: the second iteration locks it again before the deferred unlock,
// and `podman run` and every later command on the volume hang. The fix
// remembers which volume names are locked and skips duplicates.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
		return nil, fmt.Errorf("lock %d out of range", id)
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

type CtrCreateOption func(*Container) error

func WithNamedVolumes(volumes []*ContainerNamedVolume) CtrCreateOption {
	return func(ctr *Container) error {
		ctr.namedVolumes = append(ctr.namedVolumes, volumes...)
		return nil
	}
}

type BoltState struct {
	runtime    *Runtime
	volumes    map[string]VolumeConfig
	containers map[string]*Container
}

func (s *BoltState) Volume(name string) (*Volume, error) {
	cfg, ok := s.volumes[name]
	if !ok {
		return nil, ErrNoSuchVolume
	}
	lock, err := s.runtime.lockManager.RetrieveLock(cfg.LockID)
	if err != nil {
		return nil, err
	}
	return &Volume{config: &cfg, lock: lock}, nil
}

type Runtime struct {
	lock        sync.RWMutex
	lockManager Manager
	state       *BoltState
}

func (r *Runtime) newVolume(ctx context.Context, name string) (*Volume, error) {
	lock, err := r.lockManager.AllocateLock()
	if err != nil {
		return nil, err
	}
	vol := &Volume{config: &VolumeConfig{Name: name, LockID: lock.ID()}, lock: lock}
	r.state.volumes[name] = *vol.config
	return vol, nil
}

func (r *Runtime) NewContainer(ctx context.Context, id string, options ...CtrCreateOption) (*Container, error) {
	r.lock.Lock()
	defer r.lock.Unlock()
	return r.newContainer(ctx, id, options...)
}

func (r *Runtime) newContainer(ctx context.Context, id string, options ...CtrCreateOption) (*Container, error) {
	ctr := &Container{id: id}
	for _, option := range options {
		if err := option(ctr); err != nil {
			return nil, err
		}
	}
	return r.setupContainer(ctx, ctr)
}

func (r *Runtime) setupContainer(ctx context.Context, ctr *Container) (*Container, error) {
	var err error
	if ctr.lock, err = r.lockManager.AllocateLock(); err != nil {
		return nil, err
	}
	ctrNamedVolumes := make([]*Volume, 0, len(ctr.namedVolumes))
	for _, vol := range ctr.namedVolumes {
		dbVol, err := r.state.Volume(vol.Name)
		if err == nil {
			ctrNamedVolumes = append(ctrNamedVolumes, dbVol)
			continue
		} else if !errors.Is(err, ErrNoSuchVolume) {
			return nil, fmt.Errorf("error retrieving named volume %s for new container: %w", vol.Name, err)
		}
		newVol, err := r.newVolume(ctx, vol.Name)
		if err != nil {
			return nil, fmt.Errorf("error creating named volume %q: %w", vol.Name, err)
		}
		ctrNamedVolumes = append(ctrNamedVolumes, newVol)
	}

	// Lock all named volumes we are adding ourself to.
	for _, namedVol := range ctrNamedVolumes {
		toLock := namedVol
		toLock.lock.Lock()
		defer toLock.lock.Unlock()
	}

	r.state.containers[ctr.id] = ctr
	return ctr, nil
}

func main() {
	r := &Runtime{lockManager: &InMemoryManager{locks: []*Mutex{{id: 0}, {id: 1}, {id: 2}, {id: 3}}}}
	r.state = &BoltState{runtime: r, volumes: map[string]VolumeConfig{}, containers: map[string]*Container{}}

	// podman volume create data
	r.newVolume(context.Background(), "data")
	// podman run -v data:/a -v data:/b ...
	ctr, err := r.NewContainer(context.Background(), "c1", WithNamedVolumes([]*ContainerNamedVolume{{Name: "data", Dest: "/a"}, {Name: "data", Dest: "/b"}}))
	fmt.Println("created", ctr.id, err)
}
