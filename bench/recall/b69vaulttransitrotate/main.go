// hashicorp/vault PR #13795, "Fix a transit deadlock", for a bug introduced by
// time-based transit key autorotation (hashicorp/vault PR #13691).
//
// keysutil.LockManager.GetPolicy takes the per-key striped lock
// (locksutil.LockForKey). With caching disabled on the mount it returns the
// policy still write-locked and the caller must call Policy.Unlock.
// backend.autoRotateKeys, run by the periodic function, only locked and
// unlocked the policy when the key was due for rotation, so for a key without
// auto_rotate_period the continue branch left the striped lock held and the
// next pathPolicyRead and the next periodic round block in GetPolicy forever.
package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"
)

type LockEntry struct{ sync.RWMutex }

func CreateLocks() (ret []*LockEntry) {
	for range 256 {
		ret = append(ret, new(LockEntry))
	}
	return ret
}

func LockForKey(locks []*LockEntry, key string) *LockEntry {
	return locks[sha256.Sum256([]byte(key))[0]]
}

type KeyEntry struct{ CreationTime time.Time }

type Policy struct {
	l                *sync.RWMutex
	writeLocked      bool
	Name             string
	Keys             map[string]KeyEntry
	LatestVersion    int
	AutoRotatePeriod time.Duration
}

func (p *Policy) Lock(exclusive bool) {
	if exclusive {
		p.l.Lock()
		p.writeLocked = true
	} else {
		p.l.RLock()
	}
}

func (p *Policy) Unlock() {
	if p.writeLocked {
		p.writeLocked = false
		p.l.Unlock()
	} else {
		p.l.RUnlock()
	}
}

func (p *Policy) Rotate(ctx context.Context, storage *inmemStorage) error {
	p.LatestVersion++
	p.Keys[strconv.Itoa(p.LatestVersion)] = KeyEntry{CreationTime: time.Now()}
	return storage.put(p)
}

type PolicyRequest struct {
	Storage *inmemStorage
	Name    string
}

type LockManager struct {
	useCache bool
	cache    sync.Map
	keyLocks []*LockEntry
}

func (lm *LockManager) GetPolicy(ctx context.Context, req PolicyRequest) (retP *Policy, retUpserted bool, retErr error) {
	if pRaw, ok := lm.cache.Load(req.Name); lm.useCache && ok {
		return pRaw.(*Policy), false, nil
	}
	lock := LockForKey(lm.keyLocks, req.Name)
	lock.Lock()
	defer func() {
		if lm.useCache || retP == nil {
			lock.Unlock()
		}
	}()
	p := req.Storage.get(req.Name)
	if p == nil {
		return nil, false, nil
	}
	p.l, p.writeLocked = &lock.RWMutex, !lm.useCache
	if lm.useCache {
		lm.cache.Store(req.Name, p)
	}
	return p, false, nil
}

type inmemStorage struct {
	mu       sync.Mutex
	policies map[string]Policy
}

func (s *inmemStorage) List(prefix string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.policies))
}

func (s *inmemStorage) get(name string) *Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.policies[name]; ok {
		p.Keys = maps.Clone(p.Keys)
		return &p
	}
	return nil
}

func (s *inmemStorage) put(p *Policy) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.policies[p.Name] = Policy{Name: p.Name, Keys: p.Keys, LatestVersion: p.LatestVersion, AutoRotatePeriod: p.AutoRotatePeriod}
	return nil
}

type backend struct {
	lm              *LockManager
	cachingDisabled bool
}

func (b *backend) GetPolicy(ctx context.Context, req PolicyRequest) (*Policy, bool, error) {
	return b.lm.GetPolicy(ctx, req)
}

func (b *backend) autoRotateKeys(ctx context.Context, storage *inmemStorage) error {
	for _, key := range storage.List("policy/") {
		p, _, err := b.GetPolicy(ctx, PolicyRequest{Storage: storage, Name: key})
		if err != nil || p == nil {
			continue
		}
		if p.AutoRotatePeriod == 0 {
			continue
		}
		latestKey := p.Keys[strconv.Itoa(p.LatestVersion)]
		if time.Now().After(latestKey.CreationTime.Add(p.AutoRotatePeriod)) {
			if !b.cachingDisabled {
				p.Lock(true)
			}
			err = p.Rotate(ctx, storage)
			p.Unlock()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *backend) pathPolicyRead(ctx context.Context, storage *inmemStorage, name string) (map[string]interface{}, error) {
	p, _, err := b.GetPolicy(ctx, PolicyRequest{Storage: storage, Name: name})
	if err != nil || p == nil {
		return nil, err
	}
	if !b.cachingDisabled {
		p.Lock(false)
	}
	defer p.Unlock()
	return map[string]interface{}{"name": p.Name, "latest_version": p.LatestVersion}, nil
}

func main() {
	ctx := context.Background()
	storage := &inmemStorage{policies: map[string]Policy{
		"app-key":      {Name: "app-key", LatestVersion: 1, Keys: map[string]KeyEntry{"1": {CreationTime: time.Now().Add(-48 * time.Hour)}}},
		"payments-key": {Name: "payments-key", LatestVersion: 1, Keys: map[string]KeyEntry{"1": {CreationTime: time.Now().Add(-48 * time.Hour)}}, AutoRotatePeriod: 24 * time.Hour},
	}}
	b := &backend{lm: &LockManager{useCache: false, keyLocks: CreateLocks()}, cachingDisabled: true} // caching disabled on the mount

	done := make(chan struct{})
	go func() { // the periodic function of the mount, driven by the rollback manager
		defer close(done)
		for round := 0; round < 2; round++ {
			_ = b.autoRotateKeys(ctx, storage)
			time.Sleep(30 * time.Millisecond)
		}
	}()

	time.Sleep(10 * time.Millisecond)
	resp, err := b.pathPolicyRead(ctx, storage, "app-key") // vault read transit/keys/app-key
	fmt.Println("read transit/keys/app-key:", resp, err)
	<-done
}
