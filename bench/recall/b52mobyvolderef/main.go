// Project: moby/moby (Docker Engine 1.10, January 2016). Files/functions:
// volume/store/store.go (VolumeStore.Get, Dereference, List, setNamed),
// pkg/locker (Locker.Lock/Unlock, the per-name lock map), daemon/mounts.go
// (removeMountPoints), daemon/delete.go (ContainerRm), daemon/list.go (Volumes).
// Issue: moby/moby#19777 "volume store dereference return without release
// lock"; fixed by PR moby/moby#19779 "fix dead lock in volume store
// dereference".
//
// Dereference takes the per-name lock from pkg/locker (released by a defer),
// then the store's globalLock, which it releases by hand at the end. When the
// volume has no entry in s.refs (e.g. a volume the daemon got through Get when
// restoring a container after a restart; Get records the name, no reference),
// it returns early with globalLock held. The next operation recording a name,
// such as `docker volume ls` through List and setNamed, blocks on globalLock
// forever, as does every later volume operation. The fix defers the unlock.
package main

import (
	"errors"
	"fmt"
	"sync"
)

type lockCtr struct {
	mu      sync.Mutex
	waiters int32
}

type Locker struct {
	mu    sync.Mutex
	locks map[string]*lockCtr
}

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
}

func (l *Locker) Unlock(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	nameLock := l.locks[name]
	if nameLock.waiters--; nameLock.waiters <= 0 {
		delete(l.locks, name)
	}
	nameLock.mu.Unlock()
}

type Volume interface {
	Name() string
	DriverName() string
}

type Driver interface {
	List() ([]Volume, error)
	Get(name string) (Volume, error)
}

type localVolume struct{ name string }

func (v *localVolume) Name() string       { return v.name }
func (v *localVolume) DriverName() string { return "local" }

type localRoot struct{ volumes []Volume }

func (r *localRoot) List() ([]Volume, error) { return r.volumes, nil }
func (r *localRoot) Get(name string) (Volume, error) {
	for _, v := range r.volumes {
		if v.Name() == name {
			return v, nil
		}
	}
	return nil, errors.New("no such volume")
}

type VolumeStore struct {
	locks      *Locker
	globalLock sync.Mutex
	names      map[string]string
	refs       map[string][]string
	drivers    []Driver
}

func (s *VolumeStore) setNamed(name, driver, ref string) {
	s.globalLock.Lock()
	s.names[name] = driver
	if len(ref) > 0 {
		s.refs[name] = append(s.refs[name], ref)
	}
	s.globalLock.Unlock()
}

// Get looks if a volume with the given name exists and returns it if so
func (s *VolumeStore) Get(name string) (Volume, error) {
	s.locks.Lock(name)
	defer s.locks.Unlock(name)
	for _, d := range s.drivers {
		if v, err := d.Get(name); err == nil {
			s.setNamed(name, v.DriverName(), "")
			return v, nil
		}
	}
	return nil, errors.New("no such volume")
}

// Dereference removes the specified reference to the volume
func (s *VolumeStore) Dereference(v Volume, ref string) {
	s.locks.Lock(v.Name())
	defer s.locks.Unlock(v.Name())

	s.globalLock.Lock()
	refs, exists := s.refs[v.Name()]
	if !exists {
		return
	}

	for i, r := range refs {
		if r == ref {
			s.refs[v.Name()] = append(s.refs[v.Name()][:i], s.refs[v.Name()][i+1:]...)
		}
	}
	s.globalLock.Unlock()
}

// List proxies to all registered volume drivers to get the full list of volumes
func (s *VolumeStore) List() ([]Volume, []string, error) {
	var ls []Volume
	for _, d := range s.drivers {
		vols, err := d.List()
		if err != nil {
			return nil, nil, err
		}
		for _, v := range vols {
			s.locks.Lock(v.Name())
			s.setNamed(v.Name(), v.DriverName(), "")
			s.locks.Unlock(v.Name())
			ls = append(ls, v)
		}
	}
	return ls, nil, nil
}

type MountPoint struct{ Volume Volume }

type Container struct {
	ID          string
	MountPoints map[string]*MountPoint
}

type Daemon struct {
	volumes    *VolumeStore
	containers map[string]*Container
}

// restore re-attaches the volumes of containers created before the restart.
func (daemon *Daemon) restore(c *Container) {
	for _, m := range c.MountPoints {
		if v, err := daemon.volumes.Get(m.Volume.Name()); err == nil {
			m.Volume = v
		}
	}
	daemon.containers[c.ID] = c
}

func (daemon *Daemon) removeMountPoints(container *Container, rm bool) {
	for _, m := range container.MountPoints {
		if m.Volume != nil {
			daemon.volumes.Dereference(m.Volume, container.ID)
		}
	}
}

func (daemon *Daemon) ContainerRm(name string, removeVolume bool) {
	c := daemon.containers[name]
	delete(daemon.containers, name)
	daemon.removeMountPoints(c, removeVolume)
}

func (daemon *Daemon) Volumes(filter string) ([]Volume, []string, error) {
	return daemon.volumes.List()
}

func main() {
	store := &VolumeStore{locks: &Locker{locks: map[string]*lockCtr{}}, names: map[string]string{},
		refs: map[string][]string{}, drivers: []Driver{&localRoot{volumes: []Volume{&localVolume{name: "data"}}}}}
	daemon := &Daemon{volumes: store, containers: map[string]*Container{}}
	// A container created before the daemon restart is restored.
	daemon.restore(&Container{ID: "3f1c2a", MountPoints: map[string]*MountPoint{
		"/data": {Volume: &localVolume{name: "data"}}}})
	daemon.ContainerRm("3f1c2a", false) // docker rm 3f1c2a
	vols, _, err := daemon.Volumes("")  // docker volume ls
	fmt.Println("volumes:", len(vols), err)
}
