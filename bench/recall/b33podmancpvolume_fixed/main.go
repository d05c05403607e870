// Project: containers/podman (libpod/container_copy_common.go copyFromArchive,
// libpod/container_api.go CopyFromArchive, libpod/lock in-memory lock manager)
// Issue: containers/podman#25585 "podman completely deadlocks when copying to mounted volume",
// fixed by containers/podman#25586 (regression from commit e66b788)
//
// FIXED (podman#25586): the permission-fix cleanup takes the volume lock with
// a deferred unlock and calls fixVolumePermissionsUnlocked, so no path
// returns with the lock held.
//
// Line numbers in the paragraph below refer to the probe, b33podmancpvolume/main.go.
//
// Bug: copyFromArchive registers cleanup closures that run when the returned
// copy function finishes (unmount -> cleanupFuncs). The first one, which fixes
// the permissions of a volume that was copied into, takes the volume lock
// (volume.lock.Lock(), line 360) and unlocks it by hand on each path, except
// the one where the volume did not need a copy-up (a non-empty volume): it
// returns with the lock still held. The next cleanup closure unmounts the
// container's named volume and takes the same volume lock (vol.lock.Lock(),
// line 329) -> the goroutine blocks on a lock it leaked itself, and every other
// podman command touching that volume hangs.
//
// The two closures see two different *Volume values (one from
// mountNamedVolume, one from resolveCopyTarget, each freshly read from the
// state DB), but both get their lock from the runtime's lock manager by the
// volume's lock ID, i.e. the same lock.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// ---- libpod/lock ----

// Locker is lock.Locker.
type Locker interface {
	ID() uint32
	Lock()
	Unlock()
	Free() error
}

// Mutex holds a single mutex and whether it has been allocated (lock.Mutex of the in-memory manager).
type Mutex struct {
	id        uint32
	lock      sync.Mutex
	allocated bool
}

func (m *Mutex) ID() uint32  { return m.id }
func (m *Mutex) Lock()       { m.lock.Lock() }
func (m *Mutex) Unlock()     { m.lock.Unlock() }
func (m *Mutex) Free() error { m.allocated = false; return nil }

// InMemoryManager is a lock manager that allocates and retrieves local-only locks.
type InMemoryManager struct {
	locks    []*Mutex
	numLocks uint32
}

func NewInMemoryManager(numLocks uint32) *InMemoryManager {
	manager := &InMemoryManager{numLocks: numLocks}
	for i := uint32(0); i < numLocks; i++ {
		manager.locks = append(manager.locks, &Mutex{id: i})
	}
	return manager
}

// RetrieveLock retrieves a lock from the manager.
func (m *InMemoryManager) RetrieveLock(id uint32) (Locker, error) {
	if id >= m.numLocks {
		return nil, fmt.Errorf("given lock ID %d is too large - this manager only supports lock indexes up to %d", id, m.numLocks-1)
	}
	return m.locks[id], nil
}

// ---- libpod ----

type ContainerNamedVolume struct {
	Name string
	Dest string
}

type ContainerConfig struct {
	ID           string
	Name         string
	LockID       uint32
	NamedVolumes []*ContainerNamedVolume
}

type ContainerState struct {
	State      string
	Mounted    bool
	Mountpoint string
}

type Container struct {
	config  *ContainerConfig
	state   *ContainerState
	lock    Locker
	runtime *Runtime
}

type VolumeConfig struct {
	Name       string
	LockID     uint32
	MountPoint string
}

type VolumeState struct {
	MountCount  uint
	NeedsCopyUp bool
	NeedsChown  bool
	CopiedUp    bool
}

type Volume struct {
	config  *VolumeConfig
	state   *VolumeState
	lock    Locker
	runtime *Runtime
}

// BoltState is the on-disk state DB; every lookup decodes a fresh object.
type BoltState struct {
	volumes map[string]VolumeConfig
	vstates map[string]VolumeState
	runtime *Runtime
}

func (s *BoltState) Volume(name string) (*Volume, error) {
	cfg, ok := s.volumes[name]
	if !ok {
		return nil, fmt.Errorf("no volume with name %s found", name)
	}
	st := s.vstates[name]
	volume := &Volume{config: &cfg, state: &st, runtime: s.runtime}
	lock, err := s.runtime.lockManager.RetrieveLock(volume.config.LockID)
	if err != nil {
		return nil, fmt.Errorf("retrieving lock for volume %q: %w", name, err)
	}
	volume.lock = lock
	return volume, nil
}

func (s *BoltState) SaveVolume(v *Volume) error {
	s.vstates[v.config.Name] = *v.state
	return nil
}

func (s *BoltState) UpdateVolume(v *Volume) error {
	*v.state = s.vstates[v.config.Name]
	return nil
}

type Runtime struct {
	lockManager *InMemoryManager
	state       *BoltState
}

func (v *Volume) Name() string     { return v.config.Name }
func (v *Volume) update() error    { return v.runtime.state.UpdateVolume(v) }
func (v *Volume) save() error      { return v.runtime.state.SaveVolume(v) }
func (v *Volume) needsMount() bool { return false }

// unmount must be called with the volume lock held.
func (v *Volume) unmount(force bool) error {
	if v.state.MountCount > 0 {
		v.state.MountCount--
	}
	return v.save()
}

func (c *Container) ID() string   { return c.config.ID }
func (c *Container) Name() string { return c.config.Name }

func (c *Container) syncContainer() error { return nil }
func (c *Container) save() error          { return nil }

func (c *Container) ensureState(states ...string) bool {
	for _, s := range states {
		if c.state.State == s {
			return true
		}
	}
	return false
}

func (c *Container) mount() (string, error) {
	return "/var/lib/containers/storage/overlay/" + c.config.ID + "/merged", nil
}

func (c *Container) unmount(force bool) error {
	c.state.Mounted = false
	return nil
}

// mountNamedVolume mounts the named volume if needed and copies up into it.
func (c *Container) mountNamedVolume(v *ContainerNamedVolume, mountpoint string) (*Volume, error) {
	vol, err := c.runtime.state.Volume(v.Name)
	if err != nil {
		return nil, fmt.Errorf("retrieving named volume %s for container %s: %w", v.Name, c.ID(), err)
	}

	vol.lock.Lock()
	defer vol.lock.Unlock()
	if vol.needsMount() {
		return nil, errors.New("volume plugins are trimmed")
	}
	vol.state.MountCount++
	if err := vol.save(); err != nil {
		return nil, err
	}
	// (copy-up of the image content into an empty volume is trimmed)
	return vol, nil
}

// resolveCopyTarget resolves the container path and reports the named
// volume it lies in, if any.
func (c *Container) resolveCopyTarget(mountPoint string, containerPath string) (string, string, *Volume, error) {
	for _, v := range c.config.NamedVolumes {
		if containerPath == v.Dest || strings.HasPrefix(containerPath, v.Dest+"/") {
			volume, err := c.runtime.state.Volume(v.Name)
			if err != nil {
				return "", "", nil, err
			}
			return "/var/lib/containers/storage/volumes/" + v.Name + "/_data", strings.TrimPrefix(containerPath, v.Dest), volume, nil
		}
	}
	return mountPoint, containerPath, nil, nil
}

// fixVolumePermissions chowns a freshly copied-up volume to the container user.
func (c *Container) fixVolumePermissions(v *ContainerNamedVolume) error {
	vol, err := c.runtime.state.Volume(v.Name)
	if err != nil {
		return fmt.Errorf("retrieving named volume %s for container %s: %w", v.Name, c.ID(), err)
	}

	vol.lock.Lock()
	defer vol.lock.Unlock()

	return c.fixVolumePermissionsUnlocked(v, vol)
}

// fixVolumePermissionsUnlocked must be called with the volume lock held.
func (c *Container) fixVolumePermissionsUnlocked(v *ContainerNamedVolume, vol *Volume) error {
	// Volumes may need a copy-up. Skip the chown if so. This sounds like a race,
	// but the copy-up will happen under the volume lock.
	if vol.state.NeedsCopyUp {
		return nil
	}
	if vol.state.NeedsChown {
		vol.state.NeedsChown = false
		// (the lchown of the mount point is trimmed)
		return vol.save()
	}
	return nil
}

func (c *Container) copyFromArchive(path string, chown, noOverwriteDirNonDir bool, rename map[string]string, reader io.Reader) (func() error, error) {
	var (
		mountPoint   string
		resolvedRoot string
		resolvedPath string
		unmount      func()
		cleanupFuncs []func()
		err          error
		locked       bool = true
	)

	// Make sure that "/" copies the *contents* of the mount point and not
	// the directory.
	if path == "/" {
		path = "/."
	}

	// Optimization: only mount if the container is not already.
	if c.state.Mounted {
		mountPoint = c.state.Mountpoint
		unmount = func() {}
	} else {
		// NOTE: make sure to unmount in error paths.
		mountPoint, err = c.mount()
		if err != nil {
			return nil, err
		}
		c.state.Mountpoint = mountPoint
		if err := c.save(); err != nil {
			return nil, err
		}

		unmount = func() {
			if !locked {
				c.lock.Lock()
				defer c.lock.Unlock()
			}

			if err := c.syncContainer(); err != nil {
				fmt.Printf("Unable to sync container %s state: %v\n", c.ID(), err)
				return
			}

			// These have to be first, some of them rely on container rootfs still being mounted.
			for _, cleanupFunc := range cleanupFuncs {
				cleanupFunc()
			}
			if err := c.unmount(false); err != nil {
				fmt.Printf("Failed to unmount container: %v\n", err)
			}

			if c.ensureState("configured", "exited") {
				c.state.Mountpoint = ""
				if err := c.save(); err != nil {
					fmt.Printf("Writing container %s state: %v\n", c.ID(), err)
				}
			}
		}

		// Before we proceed, mount all named volumes associated with the
		// container.
		if len(c.config.NamedVolumes) > 0 {
			for _, v := range c.config.NamedVolumes {
				vol, err := c.mountNamedVolume(v, mountPoint)
				if err != nil {
					unmount()
					return nil, err
				}

				// The unmount function can be called in two places:
				// First, from unmount(), our generic cleanup function that gets
				// called on success or on failure by error.
				// Second, from the shutdown handler on receipt of a SIGTERM
				// or similar (shutdown handler registration is trimmed).
				volUnmountFunc := func() error {
					vol.lock.Lock()
					defer vol.lock.Unlock()

					if err := vol.unmount(false); err != nil {
						return err
					}

					return nil
				}

				cleanupFuncs = append(cleanupFuncs, func() {
					if err := volUnmountFunc(); err != nil {
						fmt.Printf("Unmounting container %s volume %s: %v\n", c.ID(), vol.Name(), err)
					}
				})
			}
		}
	}

	resolvedRoot, resolvedPath, volume, err := c.resolveCopyTarget(mountPoint, path)
	if err != nil {
		unmount()
		return nil, err
	}

	if volume != nil {
		// This must be the first cleanup function so it fires before volume unmounts happen.
		cleanupFuncs = append([]func(){func() {
			// This is a gross hack to ensure correct permissions
			// on a volume that was copied into that needed, but did
			// not receive, a copy-up.
			volume.lock.Lock()
			defer volume.lock.Unlock()

			if err := volume.update(); err != nil {
				fmt.Printf("Unable to update volume %s status: %v\n", volume.Name(), err)
				return
			}

			if volume.state.NeedsCopyUp && volume.state.NeedsChown {
				volume.state.NeedsCopyUp = false
				volume.state.CopiedUp = true
				if err := volume.save(); err != nil {
					fmt.Printf("Unable to save volume %s state: %v\n", volume.Name(), err)
					return
				}

				for _, namedVol := range c.config.NamedVolumes {
					if namedVol.Name == volume.Name() {
						if err := c.fixVolumePermissionsUnlocked(namedVol, volume); err != nil {
							fmt.Printf("Unable to fix volume %s permissions: %v\n", volume.Name(), err)
						}
						return
					}
				}
			}
		}}, cleanupFuncs...)
	}

	if chown {
		// (lookup of the container user for the chown is trimmed)
		_ = chown
	}

	locked = false

	fmt.Printf("Container copy *to* %q (resolved: %q) on container %q (ID: %s)\n", path, resolvedPath, c.Name(), c.ID())

	return func() error {
		defer unmount()
		// buildah copier.Put(resolvedRoot, resolvedPath, putOptions, decompressed), trimmed
		_, err := io.Copy(io.Discard, reader)
		_ = resolvedRoot
		return err
	}, nil
}

// CopyFromArchive copies the contents from the specified tarStream to path
// *inside* the container.
func (c *Container) CopyFromArchive(_ context.Context, containerPath string, chown, noOverwriteDirNonDir bool, rename map[string]string, tarStream io.Reader) (func() error, error) {
	c.lock.Lock()
	defer c.lock.Unlock()

	if err := c.syncContainer(); err != nil {
		return nil, err
	}

	return c.copyFromArchive(containerPath, chown, noOverwriteDirNonDir, rename, tarStream)
}

func main() {
	r := &Runtime{lockManager: NewInMemoryManager(16)}
	r.state = &BoltState{
		volumes: map[string]VolumeConfig{"build": {Name: "build", LockID: 1, MountPoint: "/var/lib/containers/storage/volumes/build/_data"}},
		// A volume that already has content: an earlier "podman cp" filled it,
		// so it needs no copy-up any more.
		vstates: map[string]VolumeState{"build": {NeedsCopyUp: false, NeedsChown: false, CopiedUp: true}},
		runtime: r,
	}
	ctrLock, _ := r.lockManager.RetrieveLock(0)
	ctr := &Container{
		config: &ContainerConfig{
			ID:           "3f4e5d6c7b8a",
			Name:         "builder",
			LockID:       0,
			NamedVolumes: []*ContainerNamedVolume{{Name: "build", Dest: "/builds"}},
		},
		state:   &ContainerState{State: "configured"},
		lock:    ctrLock,
		runtime: r,
	}

	// podman create --volume build:/builds debian; podman cp /tmp/test/. $A:/builds
	copyFunc, err := ctr.CopyFromArchive(context.Background(), "/builds", true, false, nil, strings.NewReader("tar stream"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := copyFunc(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("copied")
}
