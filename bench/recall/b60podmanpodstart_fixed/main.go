// Project: projectatomic/libpod (podman) v0.4.x, April 2018, on containers/storage lockfiles.
// Files/functions: libpod/pod.go (Pod.Start, startNode, buildContainerGraph), libpod/
// container_internal.go (initAndStart, init, generateSpec), container_api.go (NamespacePath),
// boltdb_state.go (BoltState.Container, PodContainers; a container's lock is
// storage.GetLockfile(lockDir/<id>)), containers/storage lockfile.go (GetLockfile, Lock).
// Fix: projectatomic/libpod PR #600 "Do not lock all containers during pod start".
//
// Pod.Start locks the pod and every container of the pod (deferred unlocks), then starts
// the containers in dependency order. A container joining another one's IPC namespace is
// initialized through initAndStart -> init -> generateSpec, which looks the namespace
// container up again in the state and calls its public NamespacePath, which locks it. The
// new Container struct shares the lockfile of the same path (cached by GetLockfile), whose
// sync.Mutex this goroutine already holds from Pod.Start: "podman pod start" hangs on every
// pod with shared namespaces. The fix locks each container only in startNode, while it starts.
package main

import (
	"fmt"
	"path/filepath"
	"sync"
)

type Locker interface {
	Lock()
	Unlock()
}

type lockfile struct{ mu sync.Mutex }

var (
	lockfiles     = map[string]*lockfile{}
	lockfilesLock sync.Mutex
)

func GetLockfile(path string) (Locker, error) {
	lockfilesLock.Lock()
	defer lockfilesLock.Unlock()
	if _, ok := lockfiles[filepath.Clean(path)]; !ok {
		lockfiles[filepath.Clean(path)] = &lockfile{}
	}
	return lockfiles[filepath.Clean(path)], nil
}

func (l *lockfile) Lock()   { l.mu.Lock() } // then fcntl(F_SETLKW) on the file
func (l *lockfile) Unlock() { l.mu.Unlock() }

type LinuxNS int
type ContainerStatus int

const (
	IPCNS                 LinuxNS         = 1
	ContainerStateRunning ContainerStatus = 1
)

type ContainerConfig struct{ ID, Pod, IPCNsCtr string }
type containerState struct {
	State ContainerStatus
	PID   int
}
type Container struct {
	config  *ContainerConfig
	state   *containerState
	lock    Locker
	runtime *Runtime
}

func (c *Container) ID() string { return c.config.ID }

type Runtime struct{ state *BoltState }
type BoltState struct {
	runtime *Runtime
	lockDir string
	configs map[string]*ContainerConfig
	states  map[string]*containerState
}

func (s *BoltState) Container(id string) (*Container, error) {
	cfg := s.configs[id]
	lock, err := GetLockfile(filepath.Join(s.lockDir, id))
	if err != nil {
		return nil, err
	}
	return &Container{config: cfg, state: s.states[id], lock: lock, runtime: s.runtime}, nil
}

func (s *BoltState) PodContainers(p *Pod) ([]*Container, error) {
	infra, err := s.Container("infra")
	if err != nil {
		return nil, err
	}
	app, err := s.Container("app")
	return []*Container{infra, app}, err
}

func (c *Container) NamespacePath(ns LinuxNS) (string, error) {
	c.lock.Lock()
	defer c.lock.Unlock()
	if c.state.State != ContainerStateRunning {
		return "", fmt.Errorf("cannot get namespace path unless container %s is running", c.ID())
	}
	return fmt.Sprintf("/proc/%d/ns/ipc", c.state.PID), nil
}

func (c *Container) generateSpec() (nsPaths []string, err error) {
	if c.config.IPCNsCtr != "" {
		ipcCtr, err := c.runtime.state.Container(c.config.IPCNsCtr)
		if err != nil {
			return nil, err
		}
		nsPath, err := ipcCtr.NamespacePath(IPCNS)
		if err != nil {
			return nil, err
		}
		nsPaths = append(nsPaths, nsPath)
	}
	return nsPaths, nil
}

func (c *Container) init() error {
	_, err := c.generateSpec()
	return err
}

func (c *Container) initAndStart() error {
	if err := c.init(); err != nil {
		return err
	}
	c.state.State, c.state.PID = ContainerStateRunning, 1000+len(c.config.ID)
	return nil
}

type containerNode struct {
	id         string
	container  *Container
	dependedOn []*containerNode
}

func buildContainerGraph(ctrs []*Container) (noDepNodes []*containerNode) {
	nodes := map[string]*containerNode{}
	for _, ctr := range ctrs {
		nodes[ctr.ID()] = &containerNode{id: ctr.ID(), container: ctr}
	}
	for _, ctr := range ctrs {
		if dep, ok := nodes[ctr.config.IPCNsCtr]; ok {
			dep.dependedOn = append(dep.dependedOn, nodes[ctr.ID()])
		} else {
			noDepNodes = append(noDepNodes, nodes[ctr.ID()])
		}
	}
	return noDepNodes
}

type Pod struct {
	lock    Locker
	runtime *Runtime
}

func startNode(node *containerNode, ctrErrors map[string]error, ctrsVisited map[string]bool) {
	if ctrsVisited[node.id] {
		return
	}
	ctrsVisited[node.id] = true
	// Lock only the container being started, and only while starting it.
	node.container.lock.Lock()
	if node.container.state.State != ContainerStateRunning {
		if err := node.container.initAndStart(); err != nil {
			ctrErrors[node.id] = err
		}
	}
	node.container.lock.Unlock()
	for _, successor := range node.dependedOn {
		startNode(successor, ctrErrors, ctrsVisited)
	}
}

func (p *Pod) Start() (map[string]error, error) {
	p.lock.Lock()
	defer p.lock.Unlock()
	allCtrs, err := p.runtime.state.PodContainers(p)
	if err != nil {
		return nil, err
	}
	// Do not lock all the containers here: startNode locks each in turn.
	ctrErrors, ctrsVisited := map[string]error{}, map[string]bool{}
	for _, node := range buildContainerGraph(allCtrs) {
		startNode(node, ctrErrors, ctrsVisited)
	}
	return ctrErrors, nil
}

func main() {
	state := &BoltState{lockDir: "/var/run/libpod/lock",
		configs: map[string]*ContainerConfig{"infra": {ID: "infra", Pod: "web"}, "app": {ID: "app", Pod: "web", IPCNsCtr: "infra"}},
		states:  map[string]*containerState{"infra": {}, "app": {}}}
	state.runtime = &Runtime{state: state}
	podLock, _ := GetLockfile("/var/run/libpod/lock/pod-web")
	errs, err := (&Pod{lock: podLock, runtime: state.runtime}).Start()
	fmt.Println("pod start:", errs, err, "- exited cleanly")
}
