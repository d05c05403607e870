// Project: grpc/grpc-go (xds/internal/resolver/watch_service.go + xdsclient)
// Issue: #5429 "xds: resolver deadlock upon receipt of new style resource name
// with unknown authority"; fix PR #5430 "xds: release mutex before registering
// for an RDS watch".
//
// serviceUpdateWatcher.handleLDSResp is the LDS watch callback. It holds w.mu
// for its whole body and, when the Listener names a new RouteConfiguration,
// registers an RDS watch with w.c.WatchRouteConfig(name, w.handleRDSResp)
// through the XDSClient interface. For an xdstp:// resource name whose
// authority is not in the bootstrap config, clientImpl.WatchRouteConfig fails
// findAuthority and invokes the callback inline with the error. That callback
// is the method value w.handleRDSResp, which locks w.mu again on the same
// goroutine -> the xdsclient callback goroutine self-deadlocks.
//
// FIXED twin (PR #5430): handleLDSResp drops w.mu around WatchRouteConfig.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type ListenerUpdate struct{ RouteConfigName string }
type RouteConfigUpdate struct{ VirtualHosts []string }
type Name struct{ Authority, ID string }

// ParseName parses "xdstp://authority/type/id" style resource names.
func ParseName(name string) *Name {
	parts := strings.SplitN(strings.TrimPrefix(name, "xdstp://"), "/", 2)
	return &Name{Authority: parts[0], ID: parts[1]}
}

type XDSClient interface {
	WatchListener(string, func(ListenerUpdate, error)) (cancel func())
	WatchRouteConfig(string, func(RouteConfigUpdate, error)) (cancel func())
}

type authority struct {
	ldsWatchers map[string]func(ListenerUpdate, error)
	rdsWatchers map[string]func(RouteConfigUpdate, error)
}

type clientImpl struct {
	authorities map[string]*authority // from the bootstrap file
	callbacks   chan func()           // xdsclient callback goroutine
	wg          sync.WaitGroup
}

func (c *clientImpl) findAuthority(n *Name) (*authority, func(), error) {
	a, ok := c.authorities[n.Authority]
	if !ok {
		return nil, nil, fmt.Errorf("xds: failed to find authority %q", n.Authority)
	}
	return a, func() {}, nil
}

func (c *clientImpl) WatchRouteConfig(routeName string, cb func(RouteConfigUpdate, error)) (cancel func()) {
	n := ParseName(routeName)
	a, unref, err := c.findAuthority(n)
	if err != nil {
		cb(RouteConfigUpdate{}, err)
		return func() {}
	}
	a.rdsWatchers[n.ID] = cb
	return func() { delete(a.rdsWatchers, n.ID); unref() }
}

func (c *clientImpl) WatchListener(serviceName string, cb func(ListenerUpdate, error)) (cancel func()) {
	n := ParseName(serviceName)
	a, unref, _ := c.findAuthority(n) // (error path identical to WatchRouteConfig)
	a.ldsWatchers[n.ID] = cb
	return func() { delete(a.ldsWatchers, n.ID); unref() }
}

type serviceUpdate struct{ virtualHost string }

type serviceUpdateWatcher struct {
	c         XDSClient
	ldsCancel func()
	serviceCb func(serviceUpdate, error)
	mu        sync.Mutex
	closed    bool // set by close(), which also cancels both watches
	rdsName   string
	rdsCancel func()
}

func (w *serviceUpdateWatcher) handleLDSResp(update ListenerUpdate, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if err != nil {
		w.serviceCb(serviceUpdate{}, err)
		return
	}
	if w.rdsName == update.RouteConfigName { // same RDS name: keep the watch
		return
	}
	w.rdsName = update.RouteConfigName
	if w.rdsCancel != nil {
		w.rdsCancel()
	}
	w.mu.Unlock() // release mutex before registering for the RDS watch (cb may run inline)
	rdsCancel := w.c.WatchRouteConfig(update.RouteConfigName, w.handleRDSResp)
	w.mu.Lock()
	w.rdsCancel = rdsCancel
}

func (w *serviceUpdateWatcher) handleRDSResp(update RouteConfigUpdate, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.rdsCancel == nil {
		return
	}
	if err != nil {
		w.serviceCb(serviceUpdate{}, err)
		return
	}
	w.serviceCb(serviceUpdate{virtualHost: update.VirtualHosts[0]}, nil)
}

func watchService(c XDSClient, serviceName string, cb func(serviceUpdate, error)) *serviceUpdateWatcher {
	w := &serviceUpdateWatcher{c: c, serviceCb: cb}
	w.ldsCancel = c.WatchListener(serviceName, w.handleLDSResp)
	return w
}

func main() {
	c := &clientImpl{
		authorities: map[string]*authority{"traffic-director": {
			ldsWatchers: map[string]func(ListenerUpdate, error){},
			rdsWatchers: map[string]func(RouteConfigUpdate, error){},
		}},
		callbacks: make(chan func(), 8),
	}
	c.wg.Add(1)
	go func() { // xdsclient: serialized watcher callbacks
		defer c.wg.Done()
		for f := range c.callbacks {
			f()
		}
	}()
	updates := make(chan error, 8) // xdsResolver.updateCh
	_ = watchService(c, "xdstp://traffic-director/envoy.config.listener.v3.Listener/svc",
		func(su serviceUpdate, err error) { updates <- err })

	// The management server sends an LDS resource whose RDS name uses an
	// authority that is not in the bootstrap file.
	lds := c.authorities["traffic-director"].ldsWatchers["envoy.config.listener.v3.Listener/svc"]
	c.callbacks <- func() {
		lds(ListenerUpdate{RouteConfigName: "xdstp://unknown-authority/envoy.config.route.v3.RouteConfiguration/rc"}, nil)
	}
	close(c.callbacks)
	c.wg.Wait() // xdsClient.Close waits for the callback goroutine
	fmt.Println("xds client closed; pending resolver updates:", len(updates))
}
