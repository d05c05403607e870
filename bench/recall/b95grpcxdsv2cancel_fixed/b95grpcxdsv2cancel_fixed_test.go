// Project: grpc/grpc-go (xds/internal/client/client.go, v2client.go, lds.go), v1.26-v1.28, early 2020 (fix approximate: PR #3477).
// Bug: v2Client.handleLDSResponse holds v2c.mu while it invokes the registered LDS callback, and Client.handleLDSUpdate
// then takes c.mu; the cancel func returned by Client.WatchService holds c.mu while calling the LDS watch's cancel,
// which takes v2c.mu, so an LDS response racing with the xds resolver's Close deadlocks on the two mutexes.
package b95grpcxdsv2cancelfixed

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

const (
	ldsURL = "type.googleapis.com/envoy.api.v2.Listener"
	rdsURL = "type.googleapis.com/envoy.api.v2.RouteConfiguration"
)

type ldsUpdate struct{ routeName string }
type rdsUpdate struct{ clusterName string }
type ldsCallback func(ldsUpdate, error)
type rdsCallback func(rdsUpdate, error)

type watchState int

const (
	watchEnqueued watchState = iota
	watchCancelled
	watchStarted
)

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

type DiscoveryResponse struct {
	TypeUrl   string
	RouteName string
}

// testHook* let the test force the interleaving; they are nil in production.
var testHookLDSResponseLocked, testHookServiceCancelLocked func()

type v2Client struct {
	sendCh chan *watchInfo

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

func (v2c *v2Client) watchLDS(target string, ldsCb ldsCallback) func() {
	return v2c.watch(&watchInfo{typeURL: ldsURL, target: []string{target}, callback: ldsCb})
}

func (v2c *v2Client) watchRDS(routeName string, rdsCb rdsCallback) func() {
	return v2c.watch(&watchInfo{typeURL: rdsURL, target: []string{routeName}, callback: rdsCb})
}

// processWatchInfo is what the send() goroutine does with a new watch before sending the xDS request.
func (v2c *v2Client) processWatchInfo(t *watchInfo) bool {
	v2c.mu.Lock()
	defer v2c.mu.Unlock()
	if t.state == watchCancelled {
		return false
	}
	t.state = watchStarted
	if existing := v2c.watchMap[t.typeURL]; existing != nil {
		existing.cancel()
	}
	v2c.watchMap[t.typeURL] = t
	return true
}

// handleLDSResponse runs on the recv() goroutine of the ADS stream.
func (v2c *v2Client) handleLDSResponse(resp *DiscoveryResponse) error {
	v2c.mu.Lock()
	if testHookLDSResponseLocked != nil {
		testHookLDSResponseLocked()
	}

	wi := v2c.watchMap[ldsURL]
	if wi == nil {
		v2c.mu.Unlock()
		return fmt.Errorf("xds: no LDS watcher found when handling LDS response: %+v", resp)
	}
	cb := wi.callback.(ldsCallback)
	v2c.mu.Unlock()
	// The watcher callback is invoked without v2c.mu.
	cb(ldsUpdate{routeName: resp.RouteName}, nil)
	return nil
}

type ServiceUpdate struct{ Cluster string }

type Client struct {
	v2c *v2Client

	mu              sync.Mutex
	serviceCallback func(ServiceUpdate, error)
	ldsCancel       func()
	rdsCancel       func()
}

func (c *Client) handleLDSUpdate(u ldsUpdate, err error) {
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

// WatchService uses LDS and RDS protocols to discover information about the provided serviceName.
func (c *Client) WatchService(serviceName string, callback func(ServiceUpdate, error)) (cancel func()) {
	c.mu.Lock()
	c.serviceCallback = callback
	c.ldsCancel = c.v2c.watchLDS(serviceName, c.handleLDSUpdate)
	c.mu.Unlock()

	return func() {
		c.mu.Lock()
		if testHookServiceCancelLocked != nil {
			testHookServiceCancelLocked()
		}
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

func TestB95grpcxdsv2cancelFixed(t *testing.T) {
	v2c := &v2Client{sendCh: make(chan *watchInfo, 8), watchMap: map[string]*watchInfo{}}
	c := &Client{v2c: v2c}
	cancelWatch := c.WatchService("foo.example.com", func(ServiceUpdate, error) {})
	if !v2c.processWatchInfo(<-v2c.sendCh) {
		t.Fatal("LDS watch was not started")
	}

	respLocked, cancelLocked := make(chan struct{}), make(chan struct{})
	testHookLDSResponseLocked = func() { close(respLocked); <-cancelLocked }
	testHookServiceCancelLocked = func() { close(cancelLocked) }

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // ADS stream recv goroutine
		defer wg.Done()
		v2c.handleLDSResponse(&DiscoveryResponse{TypeUrl: ldsURL, RouteName: "route-1"})
	}()
	go func() { // xdsResolver.Close
		defer wg.Done()
		<-respLocked
		cancelWatch()
	}()
	wg.Wait()
}
