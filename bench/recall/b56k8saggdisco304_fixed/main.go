// Fixed twin (PR #114459 applied).
// Project: kubernetes/kubernetes, kube-aggregator in kube-apiserver v1.26.0
// (alpha AggregatedDiscoveryEndpoint feature).
// File: staging/src/k8s.io/kube-aggregator/pkg/apiserver/handler_discovery.go
// Functions: discoveryManager.Run (workers), syncAPIService,
// fetchFreshDiscoveryForService, getCacheEntryForService,
// setCacheEntryForService, AddAPIService.
// Fix: kubernetes/kubernetes PR #114459 "fix double lock and excercise its
// codepath in tests" (cherry-pick #114462 to release-1.26), found while
// reviewing PR #114442.
//
// The aggregated discovery manager keeps, per backing service, the last
// discovery document it fetched together with its ETag in cachedResults,
// guarded by resultsLock. A worker drains the dirty APIService queue and calls
// syncAPIService -> fetchFreshDiscoveryForService, which re-requests /apis from
// the aggregated server with If-None-Match set to the cached ETag. On the
// 304 Not Modified branch the code still took dm.resultsLock.Lock() (left over
// from a refactor that moved the map access into the lock-protected accessor
// setCacheEntryForService) and then called setCacheEntryForService, which
// locks resultsLock again. sync.Mutex/RWMutex are not reentrant, so the worker
// blocks forever on its own lock the first time an aggregated apiserver answers
// 304, and every later discovery refresh and reader of the cache piles up
// behind it. The fix removes the stray Lock/defer Unlock on the 304 branch and
// relies on the accessor's own locking.
package main

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

type serviceKey struct {
	Namespace, Name string
	Port            int32
}

type cachedResult struct {
	discovery   map[string]string
	etag        string
	lastUpdated time.Time
}

type groupVersionInfo struct {
	lastMarkedDirty time.Time
	service         serviceKey
	handler         http.Handler
}

type discoveryManager struct {
	servicesLock sync.RWMutex
	apiServices  map[string]groupVersionInfo

	resultsLock   sync.RWMutex
	cachedResults map[serviceKey]cachedResult

	dirtyAPIServiceQueue chan string
	synced               chan string
}

func NewDiscoveryManager() *discoveryManager {
	return &discoveryManager{apiServices: map[string]groupVersionInfo{}, cachedResults: map[serviceKey]cachedResult{},
		dirtyAPIServiceQueue: make(chan string, 16), synced: make(chan string, 16)}
}

type inMemoryResponseWriter struct {
	header   http.Header
	respCode int
	data     []byte
}

func newInMemoryResponseWriter() *inMemoryResponseWriter {
	return &inMemoryResponseWriter{header: http.Header{}}
}

func (r *inMemoryResponseWriter) Header() http.Header  { return r.header }
func (r *inMemoryResponseWriter) WriteHeader(code int) { r.respCode = code }
func (r *inMemoryResponseWriter) Write(in []byte) (int, error) {
	r.data = append(r.data, in...)
	return len(in), nil
}

func (dm *discoveryManager) fetchFreshDiscoveryForService(gv string, info groupVersionInfo) (*cachedResult, error) {
	cached, exists := dm.getCacheEntryForService(info.service)
	if exists && cached.lastUpdated.After(info.lastMarkedDirty) {
		return &cached, nil
	}

	req, _ := http.NewRequest("GET", "/apis", nil)
	if exists && len(cached.etag) > 0 {
		req.Header.Add("If-None-Match", cached.etag)
	}
	now := time.Now()
	writer := newInMemoryResponseWriter()
	info.handler.ServeHTTP(writer, req)

	switch writer.respCode {
	case http.StatusNotModified:
		// Keep old entry, update timestamp
		cached = cachedResult{
			discovery:   cached.discovery,
			etag:        cached.etag,
			lastUpdated: now,
		}
		dm.setCacheEntryForService(info.service, cached)
		return &cached, nil
	case http.StatusOK:
		cached = cachedResult{discovery: map[string]string{gv: string(writer.data)},
			etag: writer.Header().Get("Etag"), lastUpdated: now}
		dm.setCacheEntryForService(info.service, cached)
		return &cached, nil
	default:
		return nil, fmt.Errorf("service %v returned non-success response code: %v", info.service, writer.respCode)
	}
}

func (dm *discoveryManager) syncAPIService(apiServiceName string) error {
	info, exists := dm.getInfoForAPIService(apiServiceName)
	if exists {
		_, err := dm.fetchFreshDiscoveryForService(apiServiceName, info)
		return err
	}
	return nil
}

func (dm *discoveryManager) Run() {
	go func() {
		for next := range dm.dirtyAPIServiceQueue {
			if err := dm.syncAPIService(next); err != nil {
				fmt.Println("sync error:", err)
			}
			dm.synced <- next
		}
	}()
}

func (dm *discoveryManager) AddAPIService(name string, svc serviceKey, handler http.Handler) {
	dm.setInfoForAPIService(name, &groupVersionInfo{lastMarkedDirty: time.Now(), service: svc, handler: handler})
	dm.dirtyAPIServiceQueue <- name
}

func (dm *discoveryManager) getCacheEntryForService(key serviceKey) (cachedResult, bool) {
	dm.resultsLock.RLock()
	defer dm.resultsLock.RUnlock()
	result, ok := dm.cachedResults[key]
	return result, ok
}

func (dm *discoveryManager) setCacheEntryForService(key serviceKey, result cachedResult) {
	dm.resultsLock.Lock()
	defer dm.resultsLock.Unlock()
	dm.cachedResults[key] = result
}

func (dm *discoveryManager) getInfoForAPIService(name string) (groupVersionInfo, bool) {
	dm.servicesLock.RLock()
	defer dm.servicesLock.RUnlock()
	result, ok := dm.apiServices[name]
	return result, ok
}

func (dm *discoveryManager) setInfoForAPIService(name string, result *groupVersionInfo) {
	dm.servicesLock.Lock()
	defer dm.servicesLock.Unlock()
	dm.apiServices[name] = *result
}

// metricsServer is an aggregated apiserver that serves its discovery document
// with an ETag and answers 304 when the client already has it.
func metricsServer() http.Handler {
	const etag = `"d41d8cd98f00b204"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Etag", etag)
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"kind":"APIGroupDiscoveryList"}`))
	})
}

func main() {
	dm := NewDiscoveryManager()
	dm.Run()
	svc := serviceKey{Namespace: "kube-system", Name: "metrics-server", Port: 443}
	dm.AddAPIService("v1beta1.metrics.k8s.io", svc, metricsServer())
	fmt.Println("synced", <-dm.synced)

	// The APIService is marked dirty again (periodic resync or an update);
	// the server answers 304 this time.
	time.Sleep(5 * time.Millisecond)
	dm.AddAPIService("v1beta1.metrics.k8s.io", svc, metricsServer())
	fmt.Println("synced", <-dm.synced, "- done")
}
