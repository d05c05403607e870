// Command b67tricksterobjlock reproduces the shape of a lock-leak deadlock
// shipped in trickstercache/trickster (the CNCF HTTP reverse proxy cache and
// time-series accelerator), fixed by PR #885 ("fix deadlock in http object
// cache").
//
// ObjectProxyCacheRequest serialises requests for one cache key through a
// named lock (locks.NamedLocker). On a cache miss it fetches the object from
// the origin and writes it to the cache; when the cache write fails (here the
// object is larger than the cache's max object size) it returns the error
// without releasing the key's lock. The next request for the same key blocks
// forever in NamedLocker.Acquire on the per-key RWMutex.
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// namedLock is one per-key lock handed out by the named locker.
type namedLock struct {
	sync.RWMutex
	name      string
	queueSize int
}

// NamedLocker hands out locks by name, creating them on first use.
type NamedLocker struct {
	mapLock sync.Mutex
	locks   map[string]*namedLock
}

func NewNamedLocker() *NamedLocker { return &NamedLocker{locks: make(map[string]*namedLock)} }

func (nl *NamedLocker) Acquire(name string) *namedLock {
	nl.mapLock.Lock()
	l, ok := nl.locks[name]
	if !ok {
		l = &namedLock{name: name}
		nl.locks[name] = l
	}
	l.queueSize++
	nl.mapLock.Unlock()
	l.Lock()
	return l
}

func (nl *NamedLocker) Release(l *namedLock) {
	nl.mapLock.Lock()
	l.queueSize--
	if l.queueSize == 0 {
		delete(nl.locks, l.name)
	}
	nl.mapLock.Unlock()
	l.Unlock()
}

var ErrKNF = errors.New("key not found in cache")

// Cache is the object cache backend interface.
type Cache interface {
	Retrieve(key string) ([]byte, error)
	Store(key string, data []byte, ttl time.Duration) error
}

type memoryCache struct {
	mu            sync.Mutex
	maxObjectSize int
	objects       map[string][]byte
}

func (c *memoryCache) Retrieve(key string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.objects[key]; ok {
		return d, nil
	}
	return nil, ErrKNF
}

func (c *memoryCache) Store(key string, data []byte, ttl time.Duration) error {
	if len(data) > c.maxObjectSize {
		return fmt.Errorf("object size %d exceeds max object size %d", len(data), c.maxObjectSize)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.objects[key] = data
	return nil
}

// Request is the part of an incoming HTTP request the cache key uses.
type Request struct{ Method, Path, RawQuery string }

type HTTPDocument struct {
	StatusCode int
	Body       []byte
}

// Origin fetches documents from the backend.
type Origin interface {
	Fetch(r *Request) (*HTTPDocument, error)
}

type bigOrigin struct{}

func (bigOrigin) Fetch(r *Request) (*HTTPDocument, error) {
	return &HTTPDocument{StatusCode: 200, Body: []byte(strings.Repeat("x", 4096))}, nil
}

type ObjectProxyCache struct {
	cache  Cache
	locker *NamedLocker
	origin Origin
	ttl    time.Duration
}

func deriveCacheKey(r *Request) string { return r.Method + "." + r.Path + "?" + r.RawQuery }

func WriteCache(c Cache, key string, d *HTTPDocument, ttl time.Duration) error {
	return c.Store(key, d.Body, ttl)
}

// ObjectProxyCacheRequest serves r from the cache, filling it on a miss.
func (opc *ObjectProxyCache) ObjectProxyCacheRequest(r *Request) (*HTTPDocument, string, error) {
	key := deriveCacheKey(r)
	lock := opc.locker.Acquire(key)

	if body, err := opc.cache.Retrieve(key); err == nil {
		opc.locker.Release(lock)
		return &HTTPDocument{StatusCode: 200, Body: body}, "hit", nil
	}
	d, err := opc.origin.Fetch(r)
	if err != nil {
		opc.locker.Release(lock)
		return nil, "proxy-error", err
	}
	if err := WriteCache(opc.cache, key, d, opc.ttl); err != nil {
		return d, "kmiss", err
	}
	opc.locker.Release(lock)
	return d, "kmiss", nil
}

func main() {
	opc := &ObjectProxyCache{
		cache:  &memoryCache{maxObjectSize: 1024, objects: map[string][]byte{}},
		locker: NewNamedLocker(),
		origin: bigOrigin{},
		ttl:    time.Minute,
	}

	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 50 * time.Millisecond)
			r := &Request{Method: "GET", Path: "/api/v1/query", RawQuery: "query=up"}
			d, status, err := opc.ObjectProxyCacheRequest(r)
			fmt.Printf("request %d: status=%s bytes=%d err=%v\n", i, status, len(d.Body), err)
		}(i)
	}
	wg.Wait()
}
