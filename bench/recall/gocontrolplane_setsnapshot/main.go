// Project: envoyproxy/go-control-plane, component: pkg/cache SnapshotCache + pkg/server stream loop.
// Bug (as remembered): SetSnapshot holds cache.mu and loops over all open
// watches of the node, calling respond(), which sends the response on the
// watch's channel. The xDS stream goroutine owned those channels but created
// them unbuffered; when a new DiscoveryRequest arrived it first cancelled the
// previous watch, and the cancel func takes cache.mu. SetSnapshot blocks on
// the send while holding cache.mu, the stream goroutine blocks in cancel on
// cache.mu and never receives -> control plane and all Envoys stall. Fixed by
// making the per-watch response channels buffered (capacity 1; a watch is
// answered at most once and then removed), so respond never blocks under mu.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Request struct {
	NodeID      string
	TypeURL     string
	VersionInfo string
}

type Response struct {
	Request Request
	Version string
}

type ResponseWatch struct {
	Request  Request
	Response chan Response
}

type statusInfo struct {
	mu      sync.RWMutex
	watches map[int64]ResponseWatch
}

type Snapshot struct{ Version string }

type snapshotCache struct {
	mu         sync.RWMutex
	snapshots  map[string]Snapshot
	status     map[string]*statusInfo
	watchCount int64
}

func NewSnapshotCache() *snapshotCache {
	return &snapshotCache{snapshots: map[string]Snapshot{}, status: map[string]*statusInfo{}}
}

func (cache *snapshotCache) respond(request Request, value chan Response, version string) {
	value <- Response{Request: request, Version: version} // DEADLOCK HERE
}

func (cache *snapshotCache) SetSnapshot(node string, snapshot Snapshot) {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	cache.snapshots[node] = snapshot
	if info, ok := cache.status[node]; ok {
		info.mu.Lock()
		defer info.mu.Unlock()
		for id, watch := range info.watches {
			if watch.Request.VersionInfo != snapshot.Version {
				cache.respond(watch.Request, watch.Response, snapshot.Version)
				delete(info.watches, id)
			}
		}
	}
}

func (cache *snapshotCache) CreateWatch(request Request, value chan Response) func() {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	info, ok := cache.status[request.NodeID]
	if !ok {
		info = &statusInfo{watches: map[int64]ResponseWatch{}}
		cache.status[request.NodeID] = info
	}
	snapshot, exists := cache.snapshots[request.NodeID]
	if exists && snapshot.Version != request.VersionInfo {
		go cache.respond(request, value, snapshot.Version)
		return nil
	}
	cache.watchCount++
	watchID := cache.watchCount
	info.mu.Lock()
	info.watches[watchID] = ResponseWatch{Request: request, Response: value}
	info.mu.Unlock()
	return cache.cancelWatch(request.NodeID, watchID)
}

func (cache *snapshotCache) cancelWatch(nodeID string, watchID int64) func() {
	return func() {
		cache.mu.RLock()
		defer cache.mu.RUnlock()
		if info, ok := cache.status[nodeID]; ok {
			info.mu.Lock()
			delete(info.watches, watchID)
			info.mu.Unlock()
		}
	}
}

// ---- pkg/server: per-stream process loop ----

type Cache interface {
	CreateWatch(Request, chan Response) func()
}

type server struct{ cache Cache }

func (s *server) process(node string, reqCh <-chan Request, done <-chan struct{}) {
	var responses chan Response
	var cancel func()
	for {
		select {
		case <-done:
			return
		case resp := <-responses:
			fmt.Println("send to envoy", node, resp.Version)
		case req := <-reqCh:
			if cancel != nil {
				cancel()
			}
			responses = make(chan Response)
			cancel = s.cache.CreateWatch(req, responses)
		}
	}
}

func main() {
	cache := NewSnapshotCache()
	srv := &server{cache: cache}
	done := make(chan struct{})
	for i := 0; i < 3; i++ {
		node := fmt.Sprintf("envoy-%d", i)
		reqCh := make(chan Request)
		go srv.process(node, reqCh, done)
		go func() {
			for v := 0; v < 50; v++ {
				reqCh <- Request{NodeID: node, TypeURL: "clusters", VersionInfo: fmt.Sprint(v)}
			}
		}()
		go func() {
			for v := 0; v < 50; v++ {
				cache.SetSnapshot(node, Snapshot{Version: fmt.Sprint(v + 1)})
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	close(done)
}
