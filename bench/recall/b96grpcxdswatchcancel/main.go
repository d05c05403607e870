// Project: grpc/grpc-go (xds/internal/client/client.go, v2client.go, lds.go), v1.26-v1.29 (2020, approximate).
// Bug: v2Client.handleLDSResponse holds v2c.mu while it invokes the LDS watcher callback Client.handleLDSUpdate,
// which takes Client.mu, while the cancel func returned by Client.WatchService holds Client.mu and calls the
// v2Client watch cancel func, which takes v2c.mu (AB-BA between the two xDS client layers).
package main

import (
	"fmt"
	"sync"
	"time"
)

const (
	ldsURL = "type.googleapis.com/envoy.api.v2.Listener"
	rdsURL = "type.googleapis.com/envoy.api.v2.RouteConfiguration"
)

type watchState int

const (
	watchEnqueued watchState = iota
	watchCancelled
	watchStarted
)

type ldsUpdate struct{ routeName string }
type ldsCallback func(ldsUpdate, error)
type rdsUpdate struct{ clusterName string }
type rdsCallback func(rdsUpdate, error)

type watchInfo struct {
	typeURL     string
	target      []string
	state       watchState
	callback    interface{}
	expiryTimer *time.Timer
}

func (wi *watchInfo) cancel() {
	wi.state = watchCancelled
	if wi.expiryTimer != nil {
		wi.expiryTimer.Stop()
	}
}

type listener struct{ name, routeConfigName string }
type discoveryResponse struct{ resources []listener }

type v2Client struct {
	sendCh   chan *watchInfo
	mu       sync.Mutex
	watchMap map[string]*watchInfo
}

func (v2c *v2Client) watch(wi *watchInfo) (cancel func()) {
	v2c.sendCh <- wi
	return func() {
		v2c.mu.Lock()
		defer v2c.mu.Unlock()
		if wi.state == watchEnqueued {
			wi.state = watchCancelled
			return
		}
		v2c.watchMap[wi.typeURL].cancel()
		delete(v2c.watchMap, wi.typeURL)
	}
}

func (v2c *v2Client) watchLDS(target string, ldsCb ldsCallback) (cancel func()) {
	return v2c.watch(&watchInfo{typeURL: ldsURL, target: []string{target}, callback: ldsCb})
}

func (v2c *v2Client) watchRDS(routeName string, rdsCb rdsCallback) (cancel func()) {
	return v2c.watch(&watchInfo{typeURL: rdsURL, target: []string{routeName}, callback: rdsCb})
}

// processWatchInfo is called by the send goroutine for each new watch.
func (v2c *v2Client) processWatchInfo(wi *watchInfo) {
	v2c.mu.Lock()
	defer v2c.mu.Unlock()
	if wi.state == watchCancelled {
		return
	}
	wi.state = watchStarted
	if existing := v2c.watchMap[wi.typeURL]; existing != nil {
		existing.cancel()
	}
	v2c.watchMap[wi.typeURL] = wi
}

func (v2c *v2Client) send() {
	for wi := range v2c.sendCh {
		v2c.processWatchInfo(wi)
	}
}

// handleLDSResponse processes an LDS response and invokes the registered watcher callback.
func (v2c *v2Client) handleLDSResponse(resp *discoveryResponse) error {
	v2c.mu.Lock()
	defer v2c.mu.Unlock()

	wi := v2c.watchMap[ldsURL]
	if wi == nil {
		return fmt.Errorf("xds: no LDS watcher found when handling LDS response: %+v", resp)
	}
	routeName := ""
	for _, r := range resp.resources {
		lis := r
		time.Sleep(100 * time.Millisecond) // ptypes.UnmarshalAny of a large Listener
		if lis.name != wi.target[0] {
			continue
		}
		routeName = lis.routeConfigName
	}
	var err error
	if routeName == "" {
		err = fmt.Errorf("xds: LDS target %s not found in received response", wi.target)
	}
	wi.callback.(ldsCallback)(ldsUpdate{routeName: routeName}, err)
	return nil
}

type ServiceUpdate struct{ Cluster string }

type Client struct {
	v2c             *v2Client
	mu              sync.Mutex
	serviceCallback func(ServiceUpdate, error)
	ldsCancel       func()
	rdsCancel       func()
}

func (c *Client) handleLDSUpdate(u ldsUpdate, err error) {
	if err != nil {
		c.mu.Lock()
		if c.serviceCallback != nil {
			c.serviceCallback(ServiceUpdate{}, err)
		}
		c.mu.Unlock()
		return
	}
	c.mu.Lock()
	c.rdsCancel = c.v2c.watchRDS(u.routeName, c.handleRDSUpdate)
	c.mu.Unlock()
}

func (c *Client) handleRDSUpdate(u rdsUpdate, err error) {
	c.mu.Lock()
	if c.serviceCallback != nil {
		c.serviceCallback(ServiceUpdate{Cluster: u.clusterName}, err)
	}
	c.mu.Unlock()
}

func (c *Client) WatchService(serviceName string, callback func(ServiceUpdate, error)) (cancel func()) {
	c.mu.Lock()
	c.serviceCallback = callback
	c.ldsCancel = c.v2c.watchLDS(serviceName, c.handleLDSUpdate)
	c.mu.Unlock()

	return func() {
		c.mu.Lock()
		c.serviceCallback = nil
		if c.ldsCancel != nil {
			c.ldsCancel()
		}
		if c.rdsCancel != nil {
			c.rdsCancel()
		}
		c.mu.Unlock()
	}
}

// xdsResolver owns the watch and cancels it when the ClientConn closes the resolver.
type xdsResolver struct {
	client      *Client
	cancelWatch func()
}

func (r *xdsResolver) Close() { r.cancelWatch() }

func main() {
	v2c := &v2Client{sendCh: make(chan *watchInfo, 16), watchMap: map[string]*watchInfo{}}
	go v2c.send()
	c := &Client{v2c: v2c}
	r := &xdsResolver{client: c}
	r.cancelWatch = c.WatchService("foo.example.com", func(u ServiceUpdate, err error) {})
	time.Sleep(50 * time.Millisecond) // send() has registered the LDS watch

	recvDone := make(chan struct{})
	go func() { // recv goroutine of the ADS stream
		defer close(recvDone)
		v2c.handleLDSResponse(&discoveryResponse{resources: []listener{{"foo.example.com", "route-1"}}})
	}()
	time.Sleep(20 * time.Millisecond)
	r.Close() // ClientConn is closing while the LDS response is being handled
	<-recvDone
	fmt.Println("resolver closed")
}
