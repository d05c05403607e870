// Project: rancher/steve (the Kubernetes API layer of Rancher), v2.12 branch
// as shipped in Rancher 2.12.2 / 2.12.3.
// Files/functions: pkg/sqlcache/informer/factory/informer_factory.go
// (CacheFactory.CacheFor, CacheFactory.cacheForLocked, DoneWithCache),
// pkg/stores/sqlproxy/proxy_store.go (Store.ListByPartitions ->
// cacheFactory.CacheFor).
// Issue rancher/rancher#52651 "[v2.12][BUG] Mutex is not released on error":
// the backport rancher/steve#820 missed the unlock of the per-GVK informer
// mutex on the newInformer error path; fixed on the v2.12 branch by adding it.
//
// CacheFor looks up (or creates) the guardedInformer for a GVK under
// informersMutex, read-locks the informer's stopMutex and calls
// cacheForLocked. cacheForLocked locks gi.informerMutex so that only one
// request builds the SQLite-backed informer for that GVK. Every error path
// unlocks informerMutex before returning except the one right after
// f.newInformer fails (for instance when the table cannot be created). After
// one such failure the mutex stays locked forever: the next list request for
// that resource type, which would retry building the informer, blocks on
// gi.informerMutex.Lock() and the Steve API for that type freezes. The fix
// adds gi.informerMutex.Unlock() before returning the newInformer error.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

type GroupVersionKind struct {
	Group, Version, Kind string
}

type ResourceInterface interface {
	List(ctx context.Context) ([]string, error)
}

type fakeClient struct{}

func (fakeClient) List(ctx context.Context) ([]string, error) { return []string{"a", "b"}, nil }

type Informer struct {
	gvk     GroupVersionKind
	handler func(error)
}

func (i *Informer) SetWatchErrorHandler(h func(error)) error {
	i.handler = h
	return nil
}

func (i *Informer) HasSynced() bool { return true }

type newInformer func(ctx context.Context, client ResourceInterface, gvk GroupVersionKind, namespaced, watchable bool) (*Informer, error)

type guardedInformer struct {
	informer      *Informer
	informerMutex *sync.Mutex
	stopMutex     *sync.RWMutex
	ctx           context.Context
	cancel        context.CancelFunc
}

type Cache struct {
	informer *Informer
	gvk      GroupVersionKind
	gi       *guardedInformer
}

type CacheFactory struct {
	ctx            context.Context
	newInformer    newInformer
	informers      map[GroupVersionKind]*guardedInformer
	informersMutex sync.Mutex
}

func (f *CacheFactory) CacheFor(ctx context.Context, client ResourceInterface, gvk GroupVersionKind, namespaced, watchable bool) (*Cache, error) {
	f.informersMutex.Lock()
	gi, ok := f.informers[gvk]
	if !ok {
		giCtx, giCancel := context.WithCancel(f.ctx)
		gi = &guardedInformer{
			informerMutex: &sync.Mutex{},
			stopMutex:     &sync.RWMutex{},
			ctx:           giCtx,
			cancel:        giCancel,
		}
		f.informers[gvk] = gi
	}
	f.informersMutex.Unlock()

	// Prevent Stop() to be called for that GVK
	gi.stopMutex.RLock()

	gvkCache, err := f.cacheForLocked(ctx, gi, client, gvk, namespaced, watchable)
	if err != nil {
		gi.stopMutex.RUnlock()
		return nil, err
	}
	return gvkCache, nil
}

func (f *CacheFactory) cacheForLocked(ctx context.Context, gi *guardedInformer, client ResourceInterface, gvk GroupVersionKind, namespaced, watchable bool) (*Cache, error) {
	gi.informerMutex.Lock()

	if gi.informer == nil {
		i, err := f.newInformer(gi.ctx, client, gvk, namespaced, watchable)
		if err != nil {
			return nil, err
		}

		err = i.SetWatchErrorHandler(func(err error) {})
		if err != nil {
			gi.informerMutex.Unlock()
			return nil, err
		}
		gi.informer = i
	}
	gi.informerMutex.Unlock()

	if !gi.informer.HasSynced() {
		return nil, fmt.Errorf("failed to sync SQLite Informer cache for GVK %v", gvk)
	}
	return &Cache{informer: gi.informer, gvk: gvk, gi: gi}, nil
}

func (f *CacheFactory) DoneWithCache(cache *Cache) {
	if cache == nil {
		return
	}
	cache.gi.stopMutex.RUnlock()
}

// Store is the sqlproxy store serving list requests from the UI.
type Store struct {
	cacheFactory *CacheFactory
	client       ResourceInterface
}

func (s *Store) ListByPartitions(ctx context.Context, gvk GroupVersionKind) ([]string, error) {
	inf, err := s.cacheFactory.CacheFor(ctx, s.client, gvk, true, true)
	if err != nil {
		return nil, fmt.Errorf("cachefor %v: %w", gvk, err)
	}
	defer s.cacheFactory.DoneWithCache(inf)
	return s.client.List(ctx)
}

func main() {
	attempts := 0
	f := &CacheFactory{
		ctx:       context.Background(),
		informers: map[GroupVersionKind]*guardedInformer{},
		newInformer: func(ctx context.Context, client ResourceInterface, gvk GroupVersionKind, namespaced, watchable bool) (*Informer, error) {
			attempts++
			if attempts == 1 {
				return nil, errors.New("create table: database is locked (SQLITE_BUSY)")
			}
			return &Informer{gvk: gvk}, nil
		},
	}
	s := &Store{cacheFactory: f, client: fakeClient{}}
	secrets := GroupVersionKind{Version: "v1", Kind: "Secret"}

	if _, err := s.ListByPartitions(context.Background(), secrets); err != nil {
		fmt.Println("first list failed:", err)
	}
	items, err := s.ListByPartitions(context.Background(), secrets)
	fmt.Println("second list:", items, err)
}
