// Fixed twin (PR #885 applied).
// Project: trickstercache/trickster (HTTP reverse proxy cache for Prometheus
// and other time-series origins), v2 main branch, late 2025.
// Files: pkg/proxy/engines/objectproxycache.go (ObjectProxyCacheRequest,
// fetchViaObjectProxyCache, handleCacheKeyMiss, upgradeLock,
// handleAllWrites), pkg/proxy/engines/proxy_request.go (proxyRequest.store),
// pkg/proxy/engines/cache.go (QueryCache, WriteCache), pkg/locks
// (NamedLocker.Acquire/RAcquire, NamedLock.Release/RRelease).
// Fix: trickstercache/trickster PR #885 "fix deadlock in http object cache"
// (December 2025).
//
// The object proxy cache serialises work per cache key with a named lock
// taken from a process-wide NamedLocker (a map of per-key RWMutexes).
// fetchViaObjectProxyCache read-acquires the key's lock and queries the
// cache. On a key miss handleCacheKeyMiss upgrades to the write lock, fetches
// the object from the origin and handleAllWrites -> proxyRequest.store ->
// WriteCache writes it back. When the cache write failed (e.g. the backend
// rejects the object), the error was returned straight up the call chain and
// fetchViaObjectProxyCache returned before it reached the Release of the
// object lock, which only happened on the success path. The next request for
// the same URL then blocks forever in RAcquire on that key's still
// write-locked mutex, as does every later request for it. The fix releases
// the object lock in a deferred call so it runs on every return path.
package main

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// ---- pkg/locks ----

type NamedLock interface {
	Release()
	RRelease()
}

type namedLock struct {
	sync.RWMutex
	name string
}

func (nl *namedLock) Release()  { nl.Unlock() }
func (nl *namedLock) RRelease() { nl.RUnlock() }

type NamedLocker struct {
	mapLock sync.Mutex
	locks   map[string]*namedLock
}

func NewNamedLocker() *NamedLocker { return &NamedLocker{locks: map[string]*namedLock{}} }

func (l *NamedLocker) get(name string) *namedLock {
	l.mapLock.Lock()
	defer l.mapLock.Unlock()
	nl, ok := l.locks[name]
	if !ok {
		nl = &namedLock{name: name}
		l.locks[name] = nl
	}
	return nl
}

func (l *NamedLocker) Acquire(name string) (NamedLock, error) {
	nl := l.get(name)
	nl.Lock()
	return nl, nil
}

func (l *NamedLocker) RAcquire(name string) (NamedLock, error) {
	nl := l.get(name)
	nl.RLock()
	return nl, nil
}

// ---- pkg/cache (memory) ----

type MemoryCache struct {
	mu            sync.Mutex
	objects       map[string][]byte
	maxObjectSize int
}

var ErrKNF = errors.New("key not found in cache")

func (c *MemoryCache) Retrieve(key string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.objects[key]; ok {
		return b, nil
	}
	return nil, ErrKNF
}

func (c *MemoryCache) Store(key string, data []byte, ttl time.Duration) error {
	if len(data) > c.maxObjectSize {
		return fmt.Errorf("object size %d exceeds max object size %d", len(data), c.maxObjectSize)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objects[key] = data
	return nil
}

// ---- pkg/proxy/engines ----

var locker = NewNamedLocker()

type proxyRequest struct {
	*http.Request
	key          string
	cacheClient  *MemoryCache
	cacheLock    NamedLock
	hasWriteLock bool
	body         []byte
	writeToCache bool
}

func QueryCache(c *MemoryCache, key string) ([]byte, string, error) {
	if b, err := c.Retrieve(key); err != ErrKNF {
		return b, "hit", err
	}
	return nil, "kmiss", nil
}

func WriteCache(c *MemoryCache, key string, d []byte, ttl time.Duration) error {
	return c.Store(key, d, ttl)
}

func (pr *proxyRequest) store() error {
	if !pr.writeToCache {
		return nil
	}
	pr.writeToCache = false
	return WriteCache(pr.cacheClient, pr.key, pr.body, 60*time.Second)
}

func upgradeLock(pr *proxyRequest) {
	pr.cacheLock.RRelease()
	pr.cacheLock, _ = locker.Acquire(pr.key)
	pr.hasWriteLock = true
}

func (pr *proxyRequest) releaseCacheLock() {
	if pr.hasWriteLock {
		pr.cacheLock.Release()
		return
	}
	pr.cacheLock.RRelease()
}

func handleAllWrites(pr *proxyRequest) error {
	// handleResponse(pr): the client already got the origin's response
	if pr.writeToCache {
		if err := pr.store(); err != nil {
			return err
		}
	}
	return nil
}

func handleCacheKeyMiss(pr *proxyRequest) error {
	upgradeLock(pr)
	pr.body = make([]byte, 4096) // makeUpstreamRequests: origin response body
	pr.writeToCache = true
	return handleAllWrites(pr)
}

func fetchViaObjectProxyCache(pr *proxyRequest) (string, error) {
	pr.cacheLock, _ = locker.RAcquire(pr.key)
	defer pr.releaseCacheLock()
	_, cacheStatus, err := QueryCache(pr.cacheClient, pr.key)
	if err != nil {
		return "err", err
	}
	if cacheStatus == "kmiss" {
		if err := handleCacheKeyMiss(pr); err != nil {
			return "proxy-error", err
		}
		return cacheStatus, nil
	}
	return cacheStatus, nil
}

func ObjectProxyCacheRequest(c *MemoryCache, r *http.Request) {
	pr := &proxyRequest{Request: r, key: "opc." + r.URL.Path, cacheClient: c}
	status, err := fetchViaObjectProxyCache(pr)
	fmt.Println(r.URL.Path, "status:", status, "err:", err)
}

func main() {
	c := &MemoryCache{objects: map[string][]byte{}, maxObjectSize: 1024}
	for i := 0; i < 2; i++ {
		r, _ := http.NewRequest("GET", "http://trickster:8480/prom1/api/v1/status/config", nil)
		ObjectProxyCacheRequest(c, r)
	}
}
