// Project: minio/minio (namespace lock map, cmd/namespace-lock.go), as remembered.
// Bug: ForceUnlock (used by the admin "clear locks" API) looked the resource
// up under lockMapMutex and returned early when it was not present, without
// releasing lockMapMutex. Every later lock()/unlock() for any object then
// blocks forever on n.lockMapMutex.Lock().
package main

import (
	"context"
	"path"
	"sync"
	"time"
)

// nsLock is the per-resource lock; it embeds the RWMutex callers lock.
type nsLock struct {
	sync.RWMutex
	ref int
}

type nsLockMap struct {
	lockMapMutex sync.Mutex
	lockMap      map[string]*nsLock
}

func newNSLock() *nsLockMap {
	return &nsLockMap{lockMap: make(map[string]*nsLock)}
}

func (n *nsLockMap) lock(ctx context.Context, volume, object string, readLock bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	resource := path.Join(volume, object)
	n.lockMapMutex.Lock()
	nsLk, found := n.lockMap[resource]
	if !found {
		nsLk = &nsLock{}
		n.lockMap[resource] = nsLk
	}
	nsLk.ref++
	n.lockMapMutex.Unlock()

	if readLock {
		nsLk.RLock()
	} else {
		nsLk.Lock()
	}
	return nil
}

func (n *nsLockMap) unlock(volume, object string, readLock bool) {
	resource := path.Join(volume, object)
	n.lockMapMutex.Lock()
	defer n.lockMapMutex.Unlock()
	nsLk, found := n.lockMap[resource]
	if !found {
		return
	}
	if readLock {
		nsLk.RUnlock()
	} else {
		nsLk.Unlock()
	}
	nsLk.ref--
	if nsLk.ref == 0 {
		delete(n.lockMap, resource)
	}
}

// ForceUnlock drops the lock entry for a resource regardless of holders.
func (n *nsLockMap) ForceUnlock(volume, object string) {
	resource := path.Join(volume, object)
	n.lockMapMutex.Lock()
	if _, found := n.lockMap[resource]; !found {
		return
	}
	delete(n.lockMap, resource)
	n.lockMapMutex.Unlock()
}

type objectLayer struct{ ns *nsLockMap }

func (o *objectLayer) PutObject(ctx context.Context, bucket, object string) error {
	if err := o.ns.lock(ctx, bucket, object, false); err != nil {
		return err
	}
	defer o.ns.unlock(bucket, object, false)
	time.Sleep(time.Millisecond) // write the object
	return nil
}

func main() {
	o := &objectLayer{ns: newNSLock()}
	ctx := context.Background()
	// admin API: clear a lock that is not held
	go o.ns.ForceUnlock("bucket", "stale-object")
	go func() {
		for {
			_ = o.PutObject(ctx, "bucket", "photo.jpg")
		}
	}()
	time.Sleep(time.Second)
}
