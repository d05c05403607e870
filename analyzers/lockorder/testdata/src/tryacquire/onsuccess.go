package tryacquire

import (
	"errors"
	"sync"
)

// A lock held exactly on the success returns goes with what the function
// returns, even when its callers cannot name it (rancher's CacheFor
// read-locks an informer's stopMutex, looked up in a map, and returns
// the cache holding that informer; Close lets it go). No inconsistent
// return. Kept on a failure return as well, it leaks there.
type informer struct {
	stopMu *sync.RWMutex
	synced bool
}

type cache struct{ inf *informer }

func (c *cache) Close() { c.inf.stopMu.RUnlock() }

type factory struct {
	mu        sync.Mutex
	informers map[string]*informer
}

func (f *factory) CacheFor(kind string) (*cache, error) {
	f.mu.Lock()
	inf, ok := f.informers[kind]
	if !ok {
		inf = &informer{stopMu: &sync.RWMutex{}}
		f.informers[kind] = inf
	}
	f.mu.Unlock()
	inf.stopMu.RLock()
	c, err := f.cacheForLocked(inf)
	if err != nil {
		inf.stopMu.RUnlock()
		return nil, err
	}
	return c, nil
}

func (f *factory) cacheForLocked(inf *informer) (*cache, error) {
	if !inf.synced {
		return nil, errors.New("not synced")
	}
	return &cache{inf: inf}, nil
}

func (f *factory) lookup(kind string) *informer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.informers[kind]
}

func (f *factory) CacheForBroken(kind string) (*cache, error) {
	inf := f.lookup(kind)
	inf.stopMu.RLock()
	if kind == "" {
		return nil, errors.New("no kind") // want `informer.stopMu taken at onsuccess.go:\d+ is still held on this return path and 1 more \(other paths release it\)`
	}
	if !inf.synced {
		inf.stopMu.RUnlock()
		return &cache{}, nil
	}
	return &cache{inf: inf}, nil
}
