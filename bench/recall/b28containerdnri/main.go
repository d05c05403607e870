// Project: containerd/containerd (pkg/nri/nri.go) + containerd/nri (pkg/adaptation/adaptation.go, v0.4.0)
// Bug:     containerd issue #10085 / nri issue #78 "NRI plugin registration can trigger a deadlock";
// fixed by containerd/nri PR #79 (vendored into containerd 1.7.x).
//
// Registering an external NRI plugin runs Adaptation.acceptPluginConnections,
// which takes the adaptation lock and then calls the runtime's SyncFn (the
// local.syncPlugin method value stored in Adaptation.syncFn); syncPlugin takes
// the containerd-side local lock. A CRI StartContainer takes the local lock
// first and then calls Adaptation.StartContainer, which takes the adaptation
// lock. Opposite lock order: the plugin never gets Synchronize and containerd
// stops processing StartContainer until it is restarted.
// Deadlocking acquisition: r.Lock() in Adaptation.StartContainer (vs l.Lock() in local.syncPlugin).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ---- github.com/containerd/nri/pkg/adaptation ----

type PodSandbox struct{ ID string }
type Container struct{ ID, State string }
type ContainerUpdate struct{ ContainerID string }
type StartContainerRequest struct {
	Pod       *PodSandbox
	Container *Container
}

type SyncCB func(ctx context.Context, pods []*PodSandbox, ctrs []*Container) ([]*ContainerUpdate, error)
type SyncFn func(context.Context, SyncCB) error

type plugin struct{ name string }

func (p *plugin) start(name, version string) error { return nil } // ttrpc handshake + Configure
func (p *plugin) synchronize(ctx context.Context, pods []*PodSandbox, ctrs []*Container) ([]*ContainerUpdate, error) {
	return nil, nil
}
func (p *plugin) startContainer(ctx context.Context, req *StartContainerRequest) error { return nil }

type Adaptation struct {
	sync.Mutex
	name, version string
	syncFn        SyncFn
	plugins       []*plugin
	synced        chan string // test hook: plugin registration finished
}

func New(name, version string, syncFn SyncFn) *Adaptation {
	return &Adaptation{name: name, version: version, syncFn: syncFn, synced: make(chan string, 1)}
}

func (r *Adaptation) StartContainer(ctx context.Context, req *StartContainerRequest) error {
	r.Lock() // held by plugin registration, which waits for the local lock we hold
	defer r.Unlock()
	for _, plugin := range r.plugins {
		if err := plugin.startContainer(ctx, req); err != nil {
			return err
		}
	}
	return nil
}

func (r *Adaptation) acceptPluginConnections(conns <-chan string) {
	ctx := context.Background()
	go func() {
		for name := range conns { // l.Accept()
			p := &plugin{name: name}
			if err := p.start(r.name, r.version); err != nil {
				continue
			}
			r.Lock()
			err := r.syncFn(ctx, p.synchronize)
			if err == nil {
				r.plugins = append(r.plugins, p)
			}
			r.Unlock()
			r.synced <- p.name
		}
	}()
}

// ---- github.com/containerd/containerd/pkg/nri ----

type containerStatus struct {
	sync.RWMutex
	state string
}

type criContainer struct {
	id     string
	status *containerStatus
}

func (c *criContainer) GetID() string { return c.id }
func (c *criContainer) GetState() string {
	c.status.RLock()
	defer c.status.RUnlock()
	return c.status.state
}

func containerToNRI(ctr *criContainer) *Container {
	return &Container{ID: ctr.GetID(), State: ctr.GetState()}
}

type local struct {
	sync.Mutex
	nri        *Adaptation
	containers []*criContainer // domains.listContainers()
}

func (l *local) StartContainer(ctx context.Context, pod *PodSandbox, ctr *criContainer) error {
	l.Lock()
	defer l.Unlock()
	request := &StartContainerRequest{Pod: pod, Container: containerToNRI(ctr)}
	return l.nri.StartContainer(ctx, request)
}

func (l *local) syncPlugin(ctx context.Context, syncFn SyncCB) error {
	l.Lock()
	defer l.Unlock()
	var ctrs []*Container
	for _, c := range l.containers {
		ctrs = append(ctrs, containerToNRI(c))
	}
	_, err := syncFn(ctx, nil, ctrs)
	return err
}

func main() {
	l := &local{}
	l.nri = New("containerd", "v1.7.13", l.syncPlugin)
	conns := make(chan string)
	l.nri.acceptPluginConnections(conns)

	ctr := &criContainer{id: "c1", status: &containerStatus{state: "CREATED"}}
	l.containers = append(l.containers, ctr)
	go func() { // event monitor updating the container status (checkpointed to disk)
		ctr.status.Lock()
		time.Sleep(40 * time.Millisecond)
		ctr.status.state = "CREATED"
		ctr.status.Unlock()
	}()
	time.Sleep(5 * time.Millisecond)

	done := make(chan error)
	go func() { done <- l.StartContainer(context.Background(), &PodSandbox{ID: "p1"}, ctr) }() // CRI StartContainer
	time.Sleep(5 * time.Millisecond)
	conns <- "10-resource-policy" // external plugin connects to /var/run/nri/nri.sock
	fmt.Println("StartContainer:", <-done)
	fmt.Println("plugin synchronized:", <-l.nri.synced)
}
