// Project: kumahq/kuma (pkg/xds/server/callbacks/dataplane_callbacks.go, dataplane_sync_tracker.go), v1.8.x, 2022.
// Bug: xdsCallbacks.OnStreamRequest re-checks under the write lock whether another request of the same xDS stream already registered the dataplane, and on that path it returns without calling d.Unlock(). The callbacks mutex stays locked forever, so the next OnStreamClosed (and every OnStreamOpen or OnStreamRequest of any proxy) blocks in d.Lock() and kuma-cp stops serving xDS (approximate: the later fix unlocks before the early return).
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

type StreamID = int64 // core_xds / core_model stand-ins
type ResourceKey struct{ Mesh, Name string }
type ProxyId struct{ mesh, name string }

func ParseProxyIdFromString(id string) (*ProxyId, error) {
	if mesh, name, ok := strings.Cut(id, "."); ok {
		return &ProxyId{mesh: mesh, name: name}, nil
	}
	return nil, errors.New("mesh must be set")
}

func (p *ProxyId) ToResourceKey() ResourceKey { return ResourceKey{Mesh: p.mesh, Name: p.name} }

type DataplaneMetadata struct{ ProxyType string }

func DataplaneMetadataFromXdsMetadata(md map[string]string) *DataplaneMetadata {
	if md == nil {
		return nil
	}
	return &DataplaneMetadata{ProxyType: md["dataplane.proxyType"]}
}

type DiscoveryRequest interface { // util_xds.DiscoveryRequest
	NodeId() string
	Metadata() map[string]string
}

type DataplaneCallbacks interface { // XDS callbacks that keep the context of Kuma Dataplane
	OnProxyConnected(streamID StreamID, dpKey ResourceKey, ctx context.Context, metadata DataplaneMetadata) error
	OnProxyReconnected(streamID StreamID, dpKey ResourceKey, ctx context.Context, metadata DataplaneMetadata) error
	OnProxyDisconnected(ctx context.Context, streamID StreamID, dpKey ResourceKey)
}

type xdsCallbacks struct {
	callbacks DataplaneCallbacks
	sync.RWMutex
	dpStreams     map[StreamID]dpStream
	activeStreams map[ResourceKey]int
}

type dpStream struct {
	dp  *ResourceKey
	ctx context.Context
}

func DataplaneCallbacksToXdsCallbacks(cb DataplaneCallbacks) *xdsCallbacks {
	return &xdsCallbacks{callbacks: cb, dpStreams: map[StreamID]dpStream{}, activeStreams: map[ResourceKey]int{}}
}

func (d *xdsCallbacks) OnStreamOpen(ctx context.Context, streamID StreamID, _ string) error {
	d.Lock()
	defer d.Unlock()
	d.dpStreams[streamID] = dpStream{ctx: ctx}
	return nil
}

func (d *xdsCallbacks) OnStreamClosed(streamID StreamID) {
	var lastStreamDpKey *ResourceKey
	d.Lock()
	dpStream := d.dpStreams[streamID]
	if dpKey := dpStream.dp; dpKey != nil {
		d.activeStreams[*dpKey]--
		if d.activeStreams[*dpKey] == 0 {
			lastStreamDpKey = dpKey
			delete(d.activeStreams, *dpKey)
		}
	}
	delete(d.dpStreams, streamID)
	d.Unlock()
	if lastStreamDpKey != nil {
		// execute callback after lock is freed, so heavy callback implementation won't block every callback for every DPP.
		d.callbacks.OnProxyDisconnected(dpStream.ctx, streamID, *lastStreamDpKey)
	}
}

func (d *xdsCallbacks) OnStreamRequest(streamID StreamID, request DiscoveryRequest) error {
	if request.NodeId() == "" {
		return nil
	}
	d.RLock()
	alreadyProcessed := d.dpStreams[streamID].dp != nil
	d.RUnlock()
	if alreadyProcessed {
		return nil
	}

	proxyId, err := ParseProxyIdFromString(request.NodeId())
	if err != nil {
		return err
	}
	dpKey := proxyId.ToResourceKey()
	metadata := DataplaneMetadataFromXdsMetadata(request.Metadata())
	if metadata == nil {
		return errors.New("metadata in xDS Node cannot be nil")
	}

	d.Lock()
	// in case client will open 2 concurrent request for the same streamID then
	// we don't to increment the counter twice, so checking once again that stream
	// wasn't processed
	alreadyProcessed = d.dpStreams[streamID].dp != nil
	if alreadyProcessed {
		return nil
	}

	dpStream := d.dpStreams[streamID]
	dpStream.dp = &dpKey
	d.dpStreams[streamID] = dpStream
	activeStreams := d.activeStreams[dpKey]
	d.activeStreams[dpKey]++
	d.Unlock()

	if activeStreams == 0 {
		return d.callbacks.OnProxyConnected(streamID, dpKey, dpStream.ctx, *metadata)
	}
	return d.callbacks.OnProxyReconnected(streamID, dpKey, dpStream.ctx, *metadata)
}

// dataplaneSyncTracker starts one watchdog per connected dataplane.
type dataplaneSyncTracker struct {
	sync.RWMutex
	watchdogs map[ResourceKey]context.CancelFunc
	connected chan ResourceKey
}

func (t *dataplaneSyncTracker) OnProxyConnected(streamID StreamID, dpKey ResourceKey, _ context.Context, _ DataplaneMetadata) error {
	t.Lock()
	defer t.Unlock()
	_, cancel := context.WithCancel(context.Background())
	t.watchdogs[dpKey] = cancel
	t.connected <- dpKey
	return nil
}

func (t *dataplaneSyncTracker) OnProxyReconnected(StreamID, ResourceKey, context.Context, DataplaneMetadata) error {
	return nil
}

func (t *dataplaneSyncTracker) OnProxyDisconnected(_ context.Context, _ StreamID, dpKey ResourceKey) {
	t.Lock()
	defer t.Unlock()
	if cancelFn := t.watchdogs[dpKey]; cancelFn != nil {
		cancelFn()
	}
	delete(t.watchdogs, dpKey)
}

// request is the first DiscoveryRequest of the stream; Metadata() only lets both requests pass the RLock check first.
type request struct {
	arrived *sync.WaitGroup
	release chan struct{}
}

func (r *request) NodeId() string { return "default.backend-01" }

func (r *request) Metadata() map[string]string {
	r.arrived.Done()
	<-r.release
	return map[string]string{"dataplane.proxyType": "dataplane"}
}

func main() {
	tracker := &dataplaneSyncTracker{watchdogs: map[ResourceKey]context.CancelFunc{}, connected: make(chan ResourceKey, 1)}
	cb := DataplaneCallbacksToXdsCallbacks(tracker)

	const stream StreamID = 1
	_ = cb.OnStreamOpen(context.Background(), stream, "")
	var arrived sync.WaitGroup
	arrived.Add(2)
	first := &request{arrived: &arrived, release: make(chan struct{})}
	second := &request{arrived: &arrived, release: make(chan struct{})}
	done := make(chan struct{}, 2)
	go func() { _ = cb.OnStreamRequest(stream, first); done <- struct{}{} }()
	go func() { _ = cb.OnStreamRequest(stream, second); done <- struct{}{} }()

	arrived.Wait() // both requests saw the stream as not processed yet
	close(first.release)
	<-tracker.connected // first request registered the dataplane
	<-done
	close(second.release)
	<-done // second request hit the "already processed" path

	cb.OnStreamClosed(stream) // proxy disconnects
	fmt.Println("stream closed, watchdogs left:", len(tracker.watchdogs))
}
