// Project: kubewharf/kelemetry (Kubernetes control-plane tracing), July 2024.
// Files/functions: pkg/diff/controller/controller.go (Start, resyncMonitorsLoop,
// resyncMonitors, compareMonitors, addMonitors, drainMonitors, drainAllMonitors,
// startMonitor), pkg/k8s/multileader (Elector.Run: one call per leader term),
// pkg/k8s/discovery (the discovery cache and its resync channel).
// Fix: PR kubewharf/kelemetry#334 "fix(diff): diff controller would deadlock
// when leader re-elects".
//
// The elector runs resyncMonitorsLoop for each leader term and cancels the
// term's context when the lease is lost. On each discovery resync the loop
// compares the wanted resource types with c.monitors (read lock), adds new
// monitors and drains stale ones (write lock each). When the term ends, the
// loop write-locks monitorsLock, defers the unlock and closes everything
// drainAllMonitors returns, but drainAllMonitors write-locks monitorsLock
// itself: the goroutine blocks on the lock it holds, the next term's resync
// blocks in compareMonitors, and no diffs are recorded after the first lease
// change. The fix makes drainAllMonitors expect its caller to hold the lock.
package main

import (
	"context"
	"fmt"
	"sync"
)

type GroupVersionResource struct{ Group, Version, Resource string }
type APIResource struct{ Verbs map[string]bool }
type GvrDetails map[GroupVersionResource]*APIResource

type ClusterDiscoveryCache struct {
	all      GvrDetails
	handlers []chan struct{}
}

func (cdc *ClusterDiscoveryCache) GetAll() GvrDetails { return cdc.all }
func (cdc *ClusterDiscoveryCache) AddResyncHandler() <-chan struct{} {
	cdc.handlers = append(cdc.handlers, make(chan struct{}, 1))
	return cdc.handlers[len(cdc.handlers)-1]
}

func (cdc *ClusterDiscoveryCache) resync() {
	for _, ch := range cdc.handlers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

type Elector struct {
	acquired, lost chan struct{}
	ended          chan int // one value per finished term
}

func (e *Elector) Run(ctx context.Context, fn func(ctx context.Context)) {
	for term := 1; ; term++ {
		<-e.acquired
		termCtx, cancel := context.WithCancel(ctx)
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			fn(termCtx)
		}()
		<-e.lost
		cancel()
		<-finished
		e.ended <- term
	}
}

type monitor struct {
	gvr       GroupVersionResource
	cancelCtx context.CancelFunc
}

func (monitor *monitor) close() { monitor.cancelCtx() }

type controller struct {
	discovery         *ClusterDiscoveryCache
	discoveryResyncCh <-chan struct{}
	elector           *Elector
	monitors          map[GroupVersionResource]*monitor
	monitorsLock      sync.RWMutex
}

func (ctrl *controller) Start(ctx context.Context) {
	go ctrl.elector.Run(ctx, ctrl.resyncMonitorsLoop)
}

func (ctrl *controller) resyncMonitorsLoop(ctx context.Context) {
	for {
		stopped := false
		select {
		case <-ctx.Done():
			stopped = true
		case <-ctrl.discoveryResyncCh:
		}
		if stopped {
			break
		}
		ctrl.resyncMonitors(ctx)
	}

	ctrl.monitorsLock.Lock()
	defer ctrl.monitorsLock.Unlock()
	for _, monitor := range ctrl.drainAllMonitors() {
		monitor.close()
	}
}

func (ctrl *controller) shouldMonitorType(gvr GroupVersionResource, apiResource *APIResource) bool {
	return apiResource.Verbs["list"] && apiResource.Verbs["watch"]
}

func (ctrl *controller) resyncMonitors(ctx context.Context) {
	expected := ctrl.discovery.GetAll()
	toStart, toStop := ctrl.compareMonitors(expected)

	newMonitors := make([]*monitor, 0, len(toStart))
	for _, gvr := range toStart {
		newMonitors = append(newMonitors, ctrl.startMonitor(ctx, gvr, expected[gvr]))
	}
	ctrl.addMonitors(newMonitors)

	for _, monitor := range ctrl.drainMonitors(toStop) {
		monitor.close()
	}
}

func (ctrl *controller) compareMonitors(expected GvrDetails) (toStart, toStop []GroupVersionResource) {
	ctrl.monitorsLock.RLock()
	defer ctrl.monitorsLock.RUnlock()
	for gvr, apiResource := range expected {
		if !ctrl.shouldMonitorType(gvr, apiResource) {
			continue
		}
		if _, exists := ctrl.monitors[gvr]; !exists {
			toStart = append(toStart, gvr)
		}
	}
	for gvr := range ctrl.monitors {
		if _, exists := expected[gvr]; !exists {
			toStop = append(toStop, gvr)
		}
	}
	return toStart, toStop
}

func (ctrl *controller) addMonitors(monitors []*monitor) {
	ctrl.monitorsLock.Lock()
	defer ctrl.monitorsLock.Unlock()
	for _, monitor := range monitors {
		ctrl.monitors[monitor.gvr] = monitor
	}
}

func (ctrl *controller) drainMonitors(gvrs []GroupVersionResource) []*monitor {
	ctrl.monitorsLock.Lock()
	defer ctrl.monitorsLock.Unlock()
	monitors := make([]*monitor, 0, len(gvrs))
	for _, gvr := range gvrs {
		monitors = append(monitors, ctrl.monitors[gvr])
		delete(ctrl.monitors, gvr)
	}
	return monitors
}

func (ctrl *controller) drainAllMonitors() []*monitor {
	ctrl.monitorsLock.Lock()
	defer ctrl.monitorsLock.Unlock()
	monitors := make([]*monitor, 0, len(ctrl.monitors))
	for gvr := range ctrl.monitors {
		monitors = append(monitors, ctrl.monitors[gvr])
		delete(ctrl.monitors, gvr)
	}
	ctrl.monitors = map[GroupVersionResource]*monitor{}
	return monitors
}

func (ctrl *controller) startMonitor(ctx context.Context, gvr GroupVersionResource, apiResource *APIResource) *monitor {
	_, cancelFunc := context.WithCancel(ctx)
	return &monitor{gvr: gvr, cancelCtx: cancelFunc}
}

func main() {
	cdc := &ClusterDiscoveryCache{all: GvrDetails{
		{Group: "apps", Version: "v1", Resource: "deployments"}: {Verbs: map[string]bool{"list": true, "watch": true}},
		{Version: "v1", Resource: "pods"}:                       {Verbs: map[string]bool{"list": true, "watch": true}},
	}}
	elector := &Elector{acquired: make(chan struct{}), lost: make(chan struct{}), ended: make(chan int)}
	ctrl := &controller{discovery: cdc, elector: elector, monitors: map[GroupVersionResource]*monitor{}}
	ctrl.discoveryResyncCh = cdc.AddResyncHandler()
	ctrl.Start(context.Background())
	for i := 0; i < 2; i++ {
		elector.acquired <- struct{}{} // become leader
		cdc.resync()                   // discovery found the resource types
		elector.lost <- struct{}{}     // lease lost (e.g. apiserver hiccup)
		fmt.Println("leader term ended:", <-elector.ended)
	}
}
