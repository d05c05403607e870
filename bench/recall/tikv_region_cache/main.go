// Project: tikv/client-go (tidb store/tikv RegionCache), as remembered.
// Bug: LocateKey took the region cache read lock for the lookup and, on a
// cache miss, loaded the region from PD and inserted it while the deferred
// RUnlock was still pending. insertRegionToCache takes mu.Lock(): an RLock ->
// Lock upgrade on the same RWMutex, which hangs the calling goroutine (and
// then every other reader/writer of the cache).
package main

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

type Region struct {
	ID       uint64
	StartKey []byte
	EndKey   []byte
	lastUse  atomic.Int64
}

func (r *Region) Contains(key []byte) bool {
	return bytes.Compare(r.StartKey, key) <= 0 &&
		(len(r.EndKey) == 0 || bytes.Compare(key, r.EndKey) < 0)
}

// PDClient is the placement-driver client used to load region metadata.
type PDClient interface {
	GetRegion(key []byte) (*Region, error)
}

type RegionCache struct {
	pd PDClient
	mu struct {
		sync.RWMutex
		regions map[uint64]*Region
	}
}

func NewRegionCache(pd PDClient) *RegionCache {
	c := &RegionCache{pd: pd}
	c.mu.regions = make(map[uint64]*Region)
	return c
}

func (c *RegionCache) searchCachedRegion(key []byte) *Region {
	for _, r := range c.mu.regions {
		if r.Contains(key) {
			return r
		}
	}
	return nil
}

// LocateKey returns the region containing key, loading it on a miss.
func (c *RegionCache) LocateKey(key []byte) (*Region, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if r := c.searchCachedRegion(key); r != nil {
		r.lastUse.Store(time.Now().Unix())
		return r, nil
	}
	r, err := c.loadRegion(key)
	if err != nil {
		return nil, err
	}
	c.insertRegionToCache(r)
	return r, nil
}

func (c *RegionCache) loadRegion(key []byte) (*Region, error) {
	r, err := c.pd.GetRegion(key)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New("region not found")
	}
	return r, nil
}

func (c *RegionCache) insertRegionToCache(r *Region) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.regions[r.ID] = r
}

type mockPD struct{}

func (mockPD) GetRegion(key []byte) (*Region, error) {
	return &Region{ID: uint64(len(key)), StartKey: key, EndKey: append(key, 0xff)}, nil
}

func main() {
	c := NewRegionCache(mockPD{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.LocateKey([]byte("t_100_r_1"))
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}
