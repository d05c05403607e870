// Project: kubernetes/helm (Tiller), v2.5.0.
// Files/functions: pkg/storage/storage.go (Storage.LockRelease,
// Storage.UnlockRelease, the releaseLocks map guarded by releaseLocksLock),
// pkg/tiller/release_server.go (ReleaseServer.UninstallRelease, which locks
// the release and defers the unlock), pkg/kube (the client deleting the
// release's resources).
// Issue #2560 "Helm delete/upgrade command hangs"; fixed for v2.5.1 by PR
// #2701 "fix(tiller): remove locking system from storage and rely on backend"
// (PR #2712 "Fix deadlock on UnlockRelease" proposed the narrower fix).
//
// Storage keeps one *sync.Mutex per release name in releaseLocks, and a
// mutex releaseLocksLock protecting that map. LockRelease takes
// releaseLocksLock and then, still holding it, locks the per-release mutex;
// UnlockRelease takes releaseLocksLock before unlocking the per-release
// mutex. Running `helm delete --purge x`, pressing Ctrl-C and issuing the
// same delete again leaves the first UninstallRelease holding x's mutex while
// Kubernetes deletes the resources; the second UninstallRelease enters
// LockRelease, takes releaseLocksLock and blocks on x's mutex. When the first
// finishes, its deferred UnlockRelease blocks on releaseLocksLock: each
// holds the lock the other needs, and every later Tiller call that touches
// the storage locks hangs until Tiller is restarted. The fix removed the
// storage-level release locking and relies on the backend instead.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type StatusCode int

const (
	DEPLOYED StatusCode = iota
	DELETING
	DELETED
)

type Release struct {
	Name      string
	Namespace string
	Manifest  string
	Status    StatusCode
}

// Driver is the storage backend (pkg/storage/driver).
type Driver interface {
	Get(key string) (*Release, error)
	Update(key string, rls *Release) error
	Delete(key string) (*Release, error)
}

type Memory struct {
	sync.RWMutex
	cache map[string]*Release
}

func (m *Memory) Get(key string) (*Release, error) {
	m.RLock()
	defer m.RUnlock()
	if r, ok := m.cache[key]; ok {
		c := *r
		return &c, nil
	}
	return nil, errors.New("release: not found")
}

func (m *Memory) Update(key string, rls *Release) error {
	m.Lock()
	defer m.Unlock()
	c := *rls
	m.cache[key] = &c
	return nil
}

func (m *Memory) Delete(key string) (*Release, error) {
	m.Lock()
	defer m.Unlock()
	delete(m.cache, key)
	return nil, nil
}

// Storage represents a storage engine for a Release. Concurrent operations
// on one release are left to the backend (the ConfigMap/Secret resource
// versions), so there is no release locking here.
type Storage struct {
	Driver

	Log func(string, ...interface{})
}

// KubeClient deletes the Kubernetes resources of a release (pkg/kube).
type KubeClient interface {
	Delete(namespace, manifest string) error
}

type kubeClient struct{}

func (kubeClient) Delete(namespace, manifest string) error {
	time.Sleep(100 * time.Millisecond) // waiting for the API server
	return nil
}

type Environment struct {
	Releases   *Storage
	KubeClient KubeClient
}

type ReleaseServer struct{ env *Environment }

type UninstallReleaseRequest struct {
	Name  string
	Purge bool
}

// UninstallRelease deletes all of the resources associated with this
// release, and marks the release DELETED.
func (s *ReleaseServer) UninstallRelease(req *UninstallReleaseRequest) error {
	rel, err := s.env.Releases.Get(req.Name)
	if err != nil {
		return err
	} else if rel.Status == DELETED {
		return fmt.Errorf("the release named %q is already deleted", req.Name)
	}
	rel.Status = DELETING
	_ = s.env.Releases.Update(req.Name, rel)
	if err := s.env.KubeClient.Delete(rel.Namespace, rel.Manifest); err != nil {
		return err
	}
	rel.Status = DELETED
	if req.Purge {
		_, err = s.env.Releases.Delete(req.Name)
		return err
	}
	return s.env.Releases.Update(req.Name, rel)
}

func main() {
	st := &Storage{
		Driver: &Memory{cache: map[string]*Release{"testchart": {Name: "testchart", Namespace: "default"}}},
		Log:    func(f string, a ...interface{}) { fmt.Printf(f+"\n", a...) },
	}
	srv := &ReleaseServer{env: &Environment{Releases: st, KubeClient: kubeClient{}}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // helm delete testchart --purge, then Ctrl-C
		defer wg.Done()
		fmt.Println("first delete:", srv.UninstallRelease(&UninstallReleaseRequest{Name: "testchart", Purge: true}))
	}()
	time.Sleep(30 * time.Millisecond)
	go func() { // helm delete testchart --purge, issued again
		defer wg.Done()
		fmt.Println("second delete:", srv.UninstallRelease(&UninstallReleaseRequest{Name: "testchart", Purge: true}))
	}()
	wg.Wait()
}
