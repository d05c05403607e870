// Project: tikv/client-go (RegionCache) -- FIXED twin.
// The read lock is released before going to PD; the insert then takes the
// write lock on its own (double-checking for a concurrent insert).
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
	if r := c.searchCachedRegion(key); r != nil {
		r.lastUse.Store(time.Now().Unix())
		c.mu.RUnlock()
		return r, nil
	}
	c.mu.RUnlock()

	r, err := c.loadRegion(key)
	if err != nil {
		return nil, err
	}
	return c.insertRegionToCache(r), nil
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

func (c *RegionCache) insertRegionToCache(r *Region) *Region {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.mu.regions[r.ID]; ok {
		return old
	}
	c.mu.regions[r.ID] = r
	return r
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
