// Project: grpc/grpc-go (balancer/rls: balancer.go, picker.go, cache.go, control_channel.go), RLS LB policy rewrite, v1.46-v1.48, 2022 (approximate).
// Bug: rlsBalancer.UpdateClientConnState held stateMu while it shrank the data cache for a new cacheSizeBytes, which takes cacheMu, whereas the RLS response callback rlsPicker.handleRouteLookupResponse holds cacheMu and then takes stateMu (to acquire child policy wrappers for the returned targets and to send a new picker), so a service config update racing with an RLS response deadlocked the channel. The fix resizes the cache only after stateMu is released, keeping the documented order cacheMu before stateMu.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var errNoSubConnAvailable = errors.New("no SubConn is available")

type cacheKey struct{ path, keys string }

type childPolicyWrapper struct {
	target string
	refCnt int
}

type cacheEntry struct {
	childPolicyWrappers []*childPolicyWrapper
	headerData          string
	size                int64
}

// dataCache is the LRU of RLS responses (eviction order simplified); callers must hold rlsBalancer.cacheMu.
type dataCache struct {
	maxSize     int64
	currentSize int64
	entries     map[cacheKey]*cacheEntry
}

func (dc *dataCache) getEntry(k cacheKey) *cacheEntry { return dc.entries[k] }

func (dc *dataCache) addEntry(k cacheKey, e *cacheEntry) {
	dc.entries[k] = e
	dc.currentSize += e.size
	dc.resize(dc.maxSize)
}

// resize evicts entries until the cache fits in size.
func (dc *dataCache) resize(size int64) {
	dc.maxSize = size
	for k, e := range dc.entries {
		if dc.currentSize <= dc.maxSize {
			return
		}
		dc.currentSize -= e.size
		delete(dc.entries, k)
	}
}

type lbConfig struct {
	lookupService  string
	cacheSizeBytes int64
}

type State struct {
	ConnectivityState string
	Picker            *rlsPicker
}

type ClientConn interface{ UpdateState(State) } // balancer.ClientConn

type testClientConn struct{ updates int }

func (cc *testClientConn) UpdateState(State) { cc.updates++ }

// controlChannel sends RouteLookup RPCs to the RLS server; responses arrive on another goroutine.
type controlChannel struct{ rlsServer func(path string) []string }

func (cc *controlChannel) lookup(path string, cb func(targets []string, headerData string, err error)) {
	go func() { cb(cc.rlsServer(path), "x-rls-data", nil) }()
}

type rlsBalancer struct {
	cc ClientConn
	// If both cacheMu and stateMu need to be acquired, the former must be
	// acquired first to prevent a deadlock.
	cacheMu    sync.Mutex
	dataCache  *dataCache
	pendingMap map[cacheKey]bool

	stateMu       sync.Mutex
	lbCfg         *lbConfig
	ctrlCh        *controlChannel
	childPolicies map[string]*childPolicyWrapper
	lastPicker    *rlsPicker
}

func (b *rlsBalancer) UpdateClientConnState(newCfg *lbConfig) error {
	b.stateMu.Lock()
	if b.lbCfg != nil && *b.lbCfg == *newCfg {
		b.stateMu.Unlock()
		return nil
	}
	// Resize the cache if the size in the config has changed.
	resizeCache := b.lbCfg == nil || newCfg.cacheSizeBytes != b.lbCfg.cacheSizeBytes
	b.lbCfg = newCfg
	b.sendNewPickerLocked()
	b.stateMu.Unlock()

	// cacheMu needs to be grabbed before stateMu if we are to hold both locks.
	if resizeCache {
		b.cacheMu.Lock()
		b.dataCache.resize(newCfg.cacheSizeBytes)
		b.cacheMu.Unlock()
	}
	return nil
}

// acquireChildPolicyReferences returns wrappers for targets, creating child policies as needed.
func (b *rlsBalancer) acquireChildPolicyReferences(targets []string) []*childPolicyWrapper {
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	var wrappers []*childPolicyWrapper
	for _, t := range targets {
		cpw, ok := b.childPolicies[t]
		if !ok {
			cpw = &childPolicyWrapper{target: t}
			b.childPolicies[t] = cpw
		}
		cpw.refCnt++
		wrappers = append(wrappers, cpw)
	}
	return wrappers
}

func (b *rlsBalancer) sendNewPicker() {
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	b.sendNewPickerLocked()
}

func (b *rlsBalancer) sendNewPickerLocked() {
	picker := &rlsPicker{lb: b, ctrlCh: b.ctrlCh}
	b.lastPicker = picker
	b.cc.UpdateState(State{ConnectivityState: "READY", Picker: picker})
}

type rlsPicker struct {
	lb     *rlsBalancer
	ctrlCh *controlChannel
}

func (p *rlsPicker) Pick(path string) (string, error) {
	p.lb.cacheMu.Lock()
	defer p.lb.cacheMu.Unlock()
	key := cacheKey{path: path, keys: "service=" + path}
	if e := p.lb.dataCache.getEntry(key); e != nil {
		return e.childPolicyWrappers[0].target, nil
	}
	if !p.lb.pendingMap[key] {
		p.lb.pendingMap[key] = true
		p.ctrlCh.lookup(path, func(targets []string, headerData string, err error) {
			p.handleRouteLookupResponse(key, targets, headerData, err)
		})
	}
	return "", errNoSubConnAvailable
}

func (p *rlsPicker) handleRouteLookupResponse(key cacheKey, targets []string, headerData string, err error) {
	p.lb.cacheMu.Lock()
	defer func() {
		delete(p.lb.pendingMap, key)
		p.lb.sendNewPicker()
		p.lb.cacheMu.Unlock()
	}()
	if err != nil {
		return
	}
	time.Sleep(50 * time.Millisecond) // widen the window (scenario only)
	wrappers := p.lb.acquireChildPolicyReferences(targets)
	p.lb.dataCache.addEntry(key, &cacheEntry{childPolicyWrappers: wrappers, headerData: headerData, size: int64(len(key.path) + len(headerData))})
}

func main() {
	b := &rlsBalancer{
		cc:            &testClientConn{},
		dataCache:     &dataCache{entries: map[cacheKey]*cacheEntry{}},
		pendingMap:    map[cacheKey]bool{},
		ctrlCh:        &controlChannel{rlsServer: func(string) []string { return []string{"backend-a:443"} }},
		childPolicies: map[string]*childPolicyWrapper{},
	}
	_ = b.UpdateClientConnState(&lbConfig{lookupService: "rls:443", cacheSizeBytes: 1 << 20})
	picker := b.lastPicker // no other goroutine runs yet
	// An RPC misses the cache and triggers an RLS request.
	_, err := picker.Pick("/grpc.testing.TestService/UnaryCall")
	fmt.Println("first pick:", err)
	time.Sleep(10 * time.Millisecond)
	// A new service config with a smaller cache arrives while the response is processed.
	_ = b.UpdateClientConnState(&lbConfig{lookupService: "rls:443", cacheSizeBytes: 4096})
	time.Sleep(100 * time.Millisecond)
	b.stateMu.Lock()
	picker = b.lastPicker
	b.stateMu.Unlock()
	target, err := picker.Pick("/grpc.testing.TestService/UnaryCall")
	fmt.Println("picked", target, err)
}
