// Project: tidb (store/tikv region_cache.go).
// Bug (approximate; modelled on the RegionCache locking pattern, exact
// issue/PR not remembered): RegionCache.LocateKey() falls back to loading
// the region from PD with RegionCache.mu write-locked; the error return for
// a failed PD lookup returned without unlocking mu. The first PD hiccup
// (e.g. a PD leader change) leaks the lock and every later LocateKey /
// region lookup from every session blocks on mu.RLock forever. Fix: unlock
// on the error path as well.
package tidb_regioncache

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
)

type RegionVerID struct {
	id      uint64
	confVer uint64
	ver     uint64
}

type Region struct {
	id       uint64
	startKey []byte
	endKey   []byte
	leader   uint64
	ver      RegionVerID
}

func (r *Region) VerID() RegionVerID { return r.ver }

func (r *Region) Contains(key []byte) bool {
	return bytes.Compare(r.startKey, key) <= 0 &&
		(bytes.Compare(key, r.endKey) < 0 || len(r.endKey) == 0)
}

type KeyLocation struct {
	Region   RegionVerID
	StartKey []byte
	EndKey   []byte
}

// pd.Client, trimmed.
type Client interface {
	GetRegion(ctx context.Context, key []byte) (*Region, error)
}

// Backoffer, trimmed.
type Backoffer struct {
	ctx        context.Context
	maxRetries int
}

type RegionCache struct {
	pdClient Client

	mu struct {
		sync.RWMutex
		regions map[RegionVerID]*Region
	}
}

func NewRegionCache(pdClient Client) *RegionCache {
	c := &RegionCache{pdClient: pdClient}
	c.mu.regions = make(map[RegionVerID]*Region)
	return c
}

// getCachedRegion expects c.mu to be held.
func (c *RegionCache) getCachedRegion(key []byte) *Region {
	for _, r := range c.mu.regions {
		if r.Contains(key) {
			return r
		}
	}
	return nil
}

func (c *RegionCache) insertRegionToCache(r *Region) {
	c.mu.regions[r.VerID()] = r
}

// loadRegion loads region from pd client, and picks the first peer as leader.
func (c *RegionCache) loadRegion(bo *Backoffer, key []byte) (*Region, error) {
	var lastErr error
	for i := 0; i < bo.maxRetries; i++ {
		r, err := c.pdClient.GetRegion(bo.ctx, key)
		if err != nil {
			lastErr = err
			continue
		}
		return r, nil
	}
	return nil, lastErr
}

// LocateKey searches for the region and range that the key is located.
func (c *RegionCache) LocateKey(bo *Backoffer, key []byte) (*KeyLocation, error) {
	c.mu.RLock() // DEADLOCK HERE
	r := c.getCachedRegion(key)
	if r != nil {
		loc := &KeyLocation{Region: r.VerID(), StartKey: r.startKey, EndKey: r.endKey}
		c.mu.RUnlock()
		return loc, nil
	}
	c.mu.RUnlock()

	c.mu.Lock()
	// double check: another session may have loaded it meanwhile
	if r = c.getCachedRegion(key); r == nil {
		var err error
		r, err = c.loadRegion(bo, key)
		if err != nil {
			return nil, err
		}
		c.insertRegionToCache(r)
	}
	c.mu.Unlock()

	return &KeyLocation{Region: r.VerID(), StartKey: r.startKey, EndKey: r.endKey}, nil
}

// ---- mock PD ----

type mockPD struct {
	mu       sync.Mutex
	failures int
}

var errPDLeaderChanged = errors.New("rpc error: code = Unknown desc = not leader")

func (m *mockPD) GetRegion(ctx context.Context, key []byte) (*Region, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failures > 0 {
		m.failures--
		return nil, errPDLeaderChanged
	}
	return &Region{id: 2, startKey: nil, endKey: nil, leader: 1, ver: RegionVerID{id: 2, confVer: 1, ver: 1}}, nil
}

func TestLocateKeyAfterPDError(t *testing.T) {
	pd := &mockPD{failures: 1}
	cache := NewRegionCache(pd)

	var wg sync.WaitGroup
	errCh := make(chan error, 1)
	wg.Add(1)
	go func() { // session 1 hits the PD leader change
		defer wg.Done()
		_, err := cache.LocateKey(&Backoffer{ctx: context.Background(), maxRetries: 1}, []byte("t\x80\x00\x00\x00\x00\x00\x00\x2d_r"))
		errCh <- err
	}()
	wg.Wait()
	if err := <-errCh; err == nil {
		t.Fatal("expected PD error")
	}

	wg.Add(1)
	go func() { // session 2 retries after PD recovered
		defer wg.Done()
		loc, err := cache.LocateKey(&Backoffer{ctx: context.Background(), maxRetries: 1}, []byte("t\x80\x00\x00\x00\x00\x00\x00\x2d_r"))
		if err != nil || loc.Region.id != 2 {
			t.Errorf("LocateKey: %v %v", loc, err)
		}
	}()
	wg.Wait()
}
