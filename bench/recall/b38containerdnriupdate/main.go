// Project: containerd/containerd 2.x (internal/nri/nri.go, internal/cri/nri/nri_api_linux.go,
// internal/cri/server/container_update_resources.go) with containerd/nri
// (pkg/adaptation/adaptation.go, plugin.go).
// Issue containerd/containerd#13733 "NRI deadlock between plugin-initiated
// Runtime.UpdateContainers and CRI lifecycle/update events", fixed by
// containerd/nri PR #301 "adaptation: avoid holding lock across runtime update
// callback" (containerd-side quick fix attempted in PR #13736).
//
// A CRI UpdateContainerResources call ends in local.PostUpdateContainer, which
// holds the containerd-side NRI lock (local's embedded Mutex) and relays the
// event through Adaptation.PostUpdateContainer -> StateChange, which takes the
// adaptation lock (line 94). Concurrently an NRI plugin calls
// Runtime.UpdateContainers over ttrpc: Adaptation.updateContainers takes the
// adaptation lock and calls the runtime's callback updateFn (a func field set
// with WithUpdateFn), i.e. local.updateFromPlugin, which takes the local lock
// (line 132). local -> adaptation on one goroutine and adaptation -> local
// on the other: both block, and every later CRI call that goes through NRI
// (StopPodSandbox, CreateContainer, ...) queues behind the local lock. The fix
// lets the runtime hand its lock to the adaptation (WithAdaptLock), which takes
// it before its own lock, so both paths lock local before adaptation.
package main

import (
	"context"
	"fmt"
	"sync"
)

// ---- containerd/nri pkg/adaptation ------------------------------------------

type Event int

const (
	Event_UNKNOWN Event = iota
	Event_POST_UPDATE_CONTAINER
)

type ContainerUpdate struct {
	ContainerId string
	CPUShares   uint64
}

type StateChangeEvent struct {
	Event       Event
	ContainerId string
}

// UpdateFn is a container runtime function for unsolicited container updates.
type UpdateFn func(context.Context, []*ContainerUpdate) ([]*ContainerUpdate, error)

type plugin struct {
	name   string
	r      *Adaptation
	events int
}

// StateChange relays an event to the plugin (a ttrpc call in containerd).
func (p *plugin) StateChange(ctx context.Context, evt *StateChangeEvent) error {
	p.events++
	return nil
}

// UpdateContainers is the Runtime service handler a plugin calls over ttrpc.
func (p *plugin) UpdateContainers(ctx context.Context, update []*ContainerUpdate) ([]*ContainerUpdate, error) {
	return p.r.updateContainers(ctx, update)
}

// Adaptation is the NRI abstraction for container runtime NRI adaptation/integration.
type Adaptation struct {
	sync.Mutex
	name     string
	updateFn UpdateFn
	plugins  []*plugin
}

type Option func(*Adaptation)

func New(name string, updateFn UpdateFn, opts ...Option) *Adaptation {
	r := &Adaptation{name: name, updateFn: updateFn}
	for _, o := range opts {
		o(r)
	}
	return r
}

// PostUpdateContainer relays the corresponding CRI event to plugins.
func (r *Adaptation) PostUpdateContainer(ctx context.Context, evt *StateChangeEvent) error {
	evt.Event = Event_POST_UPDATE_CONTAINER
	return r.StateChange(ctx, evt)
}

// StateChange relays container state changes to plugins.
func (r *Adaptation) StateChange(ctx context.Context, evt *StateChangeEvent) error {
	r.Lock()
	defer r.Unlock()
	for _, p := range r.plugins {
		if err := p.StateChange(ctx, evt); err != nil {
			return err
		}
	}
	return nil
}

// Perform a set of unsolicited container updates requested by a plugin.
func (r *Adaptation) updateContainers(ctx context.Context, req []*ContainerUpdate) ([]*ContainerUpdate, error) {
	r.Lock()
	defer r.Unlock()
	return r.updateFn(ctx, req)
}

// ---- containerd internal/nri --------------------------------------------------

type local struct {
	sync.Mutex
	nri   *Adaptation
	state map[string]uint64
}

func NewNRI() *local {
	l := &local{state: map[string]uint64{}}
	l.nri = New("containerd", l.updateFromPlugin)
	return l
}

func (l *local) PostUpdateContainer(ctx context.Context, ctrID string) error {
	l.Lock()
	defer l.Unlock()
	return l.nri.PostUpdateContainer(ctx, &StateChangeEvent{ContainerId: ctrID})
}

func (l *local) updateFromPlugin(ctx context.Context, req []*ContainerUpdate) ([]*ContainerUpdate, error) {
	l.Lock()
	defer l.Unlock()
	return l.applyUpdates(ctx, req)
}

func (l *local) applyUpdates(ctx context.Context, req []*ContainerUpdate) ([]*ContainerUpdate, error) {
	for _, u := range req {
		l.state[u.ContainerId] = u.CPUShares
	}
	return nil, nil
}

// ---- containerd internal/cri ---------------------------------------------------

type criService struct {
	nri *local
}

// UpdateContainerResources updates ContainerConfig of the container.
func (c *criService) UpdateContainerResources(ctx context.Context, id string) error {
	// ... the update itself is applied to the task here ...
	return c.nri.PostUpdateContainer(ctx, id)
}

func main() {
	l := NewNRI()
	p := &plugin{name: "10-balloons", r: l.nri}
	l.nri.plugins = append(l.nri.plugins, p)
	c := &criService{nri: l}
	ctx := context.Background()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // kubelet: in-place pod resize
		defer wg.Done()
		for i := 0; i < 200000; i++ {
			_ = c.UpdateContainerResources(ctx, "ctr-a")
		}
	}()
	go func() { // the plugin rebalances CPUs on its own
		defer wg.Done()
		for i := 0; i < 200000; i++ {
			_, _ = p.UpdateContainers(ctx, []*ContainerUpdate{{ContainerId: "ctr-b", CPUShares: uint64(i)}})
		}
	}()
	wg.Wait()
	fmt.Println("ok, events relayed:", p.events)
}
