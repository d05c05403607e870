// Shape of podman (containers/libpod) #5305 ("Add basic deadlock detection
// for container start/remove").
//
// libpod locks come from a lock manager by numeric lock ID (a SHM segment of
// pthread mutexes). After an upgrade / num_locks change without `podman
// system renumber`, a pod and one of its containers can carry the same lock
// ID. Runtime.removeContainer locks the pod's lock and then the container's
// lock: both Locker values wrap the same mutex, and the removal hangs.
// The fix compares the lock IDs first and returns define.ErrWillDeadlock.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var ErrWillDeadlock = errors.New("deadlock due to lock mismatch; run `podman system renumber`")

// ---- libpod/lock ----

type Locker interface {
	ID() uint32
	Lock()
	Unlock()
}

type Manager interface {
	RetrieveLock(id uint32) (Locker, error)
}

type shmLockManager struct {
	locks []sync.Mutex // one per lock ID in the shared segment
}

type shmLock struct {
	id uint32
	m  *shmLockManager
}

func (l *shmLock) ID() uint32 { return l.id }
func (l *shmLock) Lock()      { l.m.locks[l.id].Lock() }
func (l *shmLock) Unlock()    { l.m.locks[l.id].Unlock() }

func (m *shmLockManager) RetrieveLock(id uint32) (Locker, error) {
	if int(id) >= len(m.locks) {
		return nil, fmt.Errorf("lock %d out of range", id)
	}
	return &shmLock{id: id, m: m}, nil
}

// ---- libpod ----

type PodConfig struct {
	ID     string
	LockID uint32
}

type Pod struct {
	config  *PodConfig
	infraID string
	lock    Locker
}

func (p *Pod) ID() string       { return p.config.ID }
func (p *Pod) updatePod() error { return nil } // re-read state from the DB

type ContainerConfig struct {
	ID     string
	Pod    string
	LockID uint32
}

type Container struct {
	config *ContainerConfig
	lock   Locker
}

func (c *Container) ID() string { return c.config.ID }

// boltState stands in for the on-disk database.
type boltState struct {
	pods map[string]*PodConfig
	ctrs map[string]*ContainerConfig
}

type Runtime struct {
	state       *boltState
	lockManager Manager
	valid       bool
}

func (r *Runtime) Pod(id string) (*Pod, error) {
	cfg, ok := r.state.pods[id]
	if !ok {
		return nil, fmt.Errorf("no such pod %s", id)
	}
	lock, err := r.lockManager.RetrieveLock(cfg.LockID)
	if err != nil {
		return nil, err
	}
	return &Pod{config: cfg, infraID: "infra-" + id, lock: lock}, nil
}

func (r *Runtime) LookupContainer(id string) (*Container, error) {
	cfg, ok := r.state.ctrs[id]
	if !ok {
		return nil, fmt.Errorf("no such container %s", id)
	}
	lock, err := r.lockManager.RetrieveLock(cfg.LockID)
	if err != nil {
		return nil, err
	}
	return &Container{config: cfg, lock: lock}, nil
}

func (r *Runtime) RemoveContainer(c *Container, force bool) error {
	return r.removeContainer(c, force, false)
}

func (r *Runtime) removeContainer(c *Container, force, removePod bool) error {
	if c.config.Pod != "" && !removePod {
		pod, err := r.Pod(c.config.Pod)
		if err != nil {
			return fmt.Errorf("container %s is in pod %s, but pod cannot be retrieved: %w", c.ID(), c.config.Pod, err)
		}
		// Lock the pod while we're removing container
		pod.lock.Lock()
		defer pod.lock.Unlock()
		if err := pod.updatePod(); err != nil {
			return err
		}
		if c.ID() == pod.infraID {
			return fmt.Errorf("container %s is the infra container of pod %s", c.ID(), pod.ID())
		}
	}
	// For pod removal, the container is already locked by the caller
	if !removePod {
		c.lock.Lock()
		defer c.lock.Unlock()
	}
	if !r.valid {
		return errors.New("runtime stopped")
	}
	delete(r.state.ctrs, c.ID())
	return nil
}

func main() {
	r := &Runtime{
		lockManager: &shmLockManager{locks: make([]sync.Mutex, 8)},
		valid:       true,
		state: &boltState{
			pods: map[string]*PodConfig{"web": {ID: "web", LockID: 3}},
			ctrs: map[string]*ContainerConfig{
				"nginx":   {ID: "nginx", Pod: "web", LockID: 4},
				"sidecar": {ID: "sidecar", Pod: "web", LockID: 3}, // shares the pod's lock ID
			},
		},
	}
	for _, id := range []string{"nginx", "sidecar"} {
		c, err := r.LookupContainer(id)
		if err != nil {
			fmt.Println(err)
			continue
		}
		if err := r.RemoveContainer(c, true); err != nil {
			fmt.Println("rm", id, "failed:", err)
			continue
		}
		fmt.Println("removed", id)
	}
}
