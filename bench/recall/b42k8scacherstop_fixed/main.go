// Project: kubernetes/kubernetes, v1.9 (k8s.io/apiserver).
// Files/functions: staging/src/k8s.io/apiserver/pkg/storage/cacher.go
// (NewCacherFromConfig, Cacher.startCaching, Cacher.isStopped, Cacher.Stop),
// staging/src/k8s.io/apiserver/pkg/registry/generic/registry/storage_factory.go
// (StorageWithCacher and its DestroyFunc), the registry stores of a resource
// and its subresources that share one cacher.
// Fix: PR #57366 "Cacher stopLock should be unlocked" (cherry-picked to 1.9
// as PR #65002).
//
// Since cachers are shared between a resource and its subresources, each of
// their DestroyFuncs calls Cacher.Stop, and Stop guards against stopping
// twice: a quick isStopped() check under the read lock, then stopLock.Lock()
// and a second check of c.stopped. The second check returned without
// unlocking. When two destroy funcs for the same cacher run concurrently,
// both pass isStopped(); the first marks the cacher stopped and closes
// stopCh, the second finds it stopped and returns still holding stopLock
// for writing. Any later isStopped() - the reflector loop's check or the
// next destroy func's Stop - blocks forever, so apiserver shutdown hangs. The
// fix unlocks stopLock before that early return.
package main

import (
	"fmt"
	"sync"
	"time"
)

// Reflector stands in for client-go's cache.Reflector.
type Reflector struct{ resource string }

func (r *Reflector) ListAndWatch(stopCh <-chan struct{}) error {
	<-stopCh
	return nil
}

// Until runs f every period until stopCh is closed (k8s.io/apimachinery/pkg/util/wait).
func Until(f func(), period time.Duration, stopCh <-chan struct{}) {
	for {
		select {
		case <-stopCh:
			return
		default:
		}
		f()
		select {
		case <-stopCh:
			return
		case <-time.After(period):
		}
	}
}

type CacherConfig struct{ ResourcePrefix string }

type Cacher struct {
	reflector *Reflector

	// Handling graceful termination.
	stopLock sync.RWMutex
	stopped  bool
	stopCh   chan struct{}
	stopWg   sync.WaitGroup
}

func NewCacherFromConfig(config CacherConfig) *Cacher {
	stopCh := make(chan struct{})
	cacher := &Cacher{reflector: &Reflector{resource: config.ResourcePrefix}, stopCh: stopCh}
	cacher.stopWg.Add(1)
	go func() {
		defer cacher.stopWg.Done()
		Until(
			func() {
				if !cacher.isStopped() {
					cacher.startCaching(stopCh)
				}
			}, time.Second, stopCh,
		)
	}()
	return cacher
}

func (c *Cacher) startCaching(stopChannel <-chan struct{}) {
	if err := c.reflector.ListAndWatch(stopChannel); err != nil {
		fmt.Println("unexpected ListAndWatch error:", err)
	}
}

func (c *Cacher) isStopped() bool {
	c.stopLock.RLock()
	defer c.stopLock.RUnlock()
	return c.stopped
}

func (c *Cacher) Stop() {
	// avoid stopping twice (note: cachers are shared with subresources)
	if c.isStopped() {
		return
	}
	time.Sleep(20 * time.Millisecond) // the other destroy func runs meanwhile
	c.stopLock.Lock()
	if c.stopped {
		c.stopLock.Unlock()
		return
	}
	c.stopped = true
	c.stopLock.Unlock()
	close(c.stopCh)
	c.stopWg.Wait()
}

// DestroyFunc releases the resources of a storage.
type DestroyFunc func()

// StorageWithCacher returns the cacher-backed storage's destroy func.
func StorageWithCacher(cacher *Cacher, destroyEtcd DestroyFunc) DestroyFunc {
	return func() {
		cacher.Stop()
		destroyEtcd()
	}
}

// Store is the generic registry store of one resource or subresource.
type Store struct {
	QualifiedResource string
	DestroyFunc       DestroyFunc
}

func main() {
	cacher := NewCacherFromConfig(CacherConfig{ResourcePrefix: "/pods"})
	destroy := StorageWithCacher(cacher, func() {})
	pods := &Store{QualifiedResource: "pods", DestroyFunc: destroy}
	status := &Store{QualifiedResource: "pods/status", DestroyFunc: destroy}
	eviction := &Store{QualifiedResource: "pods/eviction", DestroyFunc: destroy}

	var wg sync.WaitGroup
	for _, s := range []*Store{pods, status} {
		wg.Add(1)
		go func(s *Store) {
			defer wg.Done()
			s.DestroyFunc()
			fmt.Println("destroyed", s.QualifiedResource)
		}(s)
	}
	wg.Wait()
	eviction.DestroyFunc()
	fmt.Println("destroyed", eviction.QualifiedResource)
}
