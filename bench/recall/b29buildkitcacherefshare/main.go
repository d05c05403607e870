// Project: moby/buildkit — solver/llbsolver/ops/exec.go (shared cache mounts)
// Issue: moby/buildkit#1322 "Deadlock on cache mounts"; fix PR moby/buildkit#1355
// ("ops: fix deadlock on releasing shared mounts").
//
// Cache mounts with sharing=shared are tracked in the global sharedCacheRefs
// (cacheRefs, guarded by cacheRefs.mu). cacheRefs.get() holds cacheRefs.mu
// and then clone() takes the per-share cacheRefShare.mu. cacheRef.Release()
// holds cacheRefShare.mu and, when the last ref goes away, cacheRefShare.release()
// takes the global cacheRefs.mu (r.main.mu). When the last shared mount is
// released at the same time another exec mounts the same key, the two
// goroutines take the locks in opposite order (AB-BA). The release goroutine
// blocks at r.main.mu.Lock() in release() (line 84) while the mounting
// goroutine blocks at r.mu.Lock() in clone() (line 76).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type MutableRef interface {
	Release(ctx context.Context) error
	ID() string
}

type mutableRef struct{ id string }

func (m *mutableRef) Release(ctx context.Context) error { return nil }
func (m *mutableRef) ID() string                        { return m.id }

var sharedCacheRefs = &cacheRefs{}

// test hooks, as added by the fix's unit test
var cacheRefReleaseHijack func()
var cacheRefCloneHijack func()

type cacheRefs struct {
	mu     sync.Mutex
	shares map[string]*cacheRefShare
}

func (r *cacheRefs) get(key string, fn func() (MutableRef, error)) (MutableRef, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shares == nil {
		r.shares = map[string]*cacheRefShare{}
	}
	share, ok := r.shares[key]
	if ok {
		return share.clone(), nil
	}
	mref, err := fn()
	if err != nil {
		return nil, err
	}
	share = &cacheRefShare{MutableRef: mref, main: r, key: key, refs: map[*cacheRef]struct{}{}}
	r.shares[key] = share
	return share.clone(), nil
}

type cacheRefShare struct {
	MutableRef
	mu   sync.Mutex
	refs map[*cacheRef]struct{}
	main *cacheRefs
	key  string
}

func (r *cacheRefShare) clone() MutableRef {
	cacheRef := &cacheRef{cacheRefShare: r}
	if cacheRefCloneHijack != nil {
		cacheRefCloneHijack()
	}
	r.mu.Lock() // deadlocks: share.mu held by Release, we hold main.mu
	r.refs[cacheRef] = struct{}{}
	r.mu.Unlock()
	return cacheRef
}

func (r *cacheRefShare) release(ctx context.Context) error {
	if r.main != nil {
		r.main.mu.Lock() // deadlocks: main.mu held by get, we hold share.mu
		defer r.main.mu.Unlock()
		delete(r.main.shares, r.key)
	}
	return r.MutableRef.Release(ctx)
}

type cacheRef struct {
	*cacheRefShare
}

func (r *cacheRef) Release(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.refs, r)
	if len(r.refs) == 0 {
		if cacheRefReleaseHijack != nil {
			cacheRefReleaseHijack()
		}
		return r.release(ctx)
	}
	return nil
}

func main() {
	ctx := context.Background()
	newRef := func() (MutableRef, error) { return &mutableRef{id: "cache-mount"}, nil }

	ref, _ := sharedCacheRefs.get("go-build-cache", newRef)

	releasing := make(chan struct{})
	cloning := make(chan struct{})
	var releaseOnce sync.Once
	cacheRefReleaseHijack = func() {
		releaseOnce.Do(func() {
			close(releasing)
			select {
			case <-cloning:
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
	cacheRefCloneHijack = func() {
		select {
		case <-cloning:
		default:
			close(cloning)
		}
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // exec #1 finishes and releases its shared mount
		defer wg.Done()
		_ = ref.Release(ctx)
	}()
	go func() { // exec #2 mounts the same cache id concurrently
		defer wg.Done()
		<-releasing
		r2, _ := sharedCacheRefs.get("go-build-cache", newRef)
		_ = r2.Release(ctx)
	}()
	wg.Wait()
	fmt.Println("done")
}
