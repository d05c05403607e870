// Project: emissary-ingress (pkg/k8s/watcher.go, pkg/kubeapply/waiter.go; pkg/k8s came from datawire/teleproxy), 2019-2020 (approximate).
// Bug: Watcher.WatchQuery wraps every listener in an invoke closure that holds w.mutex while the listener runs, and Start calls invoke for each watch right after the initial sync. The kubeapply Waiter's listener calls watcher.Stop() as soon as every applied resource is ready, and Stop took the same w.mutex, so a Waiter whose resources are already ready deadlocks inside Start (the fix gave Stop its own stopMu "so it is safe to call from a watch callback").
package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

type Resource map[string]interface{}

func (r Resource) QKind() string { return r["kind"].(string) }
func (r Resource) QName() string { return r["name"].(string) + "." + r["namespace"].(string) }

type ResourceType struct{ Name string }

func (r ResourceType) String() string { return r.Name }

type Query struct {
	Kind         string
	resourceType ResourceType
}

type Client struct{ objects map[string][]Resource } // ListQuery stands in for the API server

func (c *Client) ResolveResourceType(kind string) (ResourceType, error) {
	return ResourceType{Name: kind}, nil
}

func (c *Client) ListQuery(_ context.Context, q Query) ([]Resource, error) {
	return c.objects[q.resourceType.Name], nil
}

type store struct{ items map[string]Resource } // the informer cache.Store

func (s *store) Update(r Resource) { s.items[r.QName()] = r }
func (s *store) List() (out []Resource) {
	for _, r := range s.items {
		out = append(out, r)
	}
	return out
}

type watch struct {
	query          Query
	store          *store
	invoke, runner func()
}

// Watcher is a kubernetes watcher that can watch multiple queries simultaneously
type Watcher struct {
	Client  *Client
	watches map[ResourceType]watch
	stop    chan struct{}
	wg      sync.WaitGroup
	mutex   sync.Mutex // guards started and serializes listeners
	started bool
	stopped bool
}

func (c *Client) Watcher() *Watcher {
	return &Watcher{Client: c, watches: make(map[ResourceType]watch), stop: make(chan struct{})}
}

func (w *Watcher) WatchQuery(query Query, listener func(*Watcher) error) error {
	query.resourceType, _ = w.Client.ResolveResourceType(query.Kind)
	invoke := func() { // listener runs with w.mutex held
		w.mutex.Lock()
		defer w.mutex.Unlock()
		if err := listener(w); err != nil {
			panic(err)
		}
	}
	runner := func() {
		<-w.stop // controller.Run(w.stop): the informer delivers events via invoke
		w.wg.Done()
	}
	w.watches[query.resourceType] = watch{query: query, store: &store{items: map[string]Resource{}}, invoke: invoke, runner: runner}
	return nil
}

func (w *Watcher) Start(ctx context.Context) error {
	w.mutex.Lock()
	if w.started {
		w.mutex.Unlock()
		return nil
	}
	w.started = true
	w.mutex.Unlock()
	for kind := range w.watches {
		if err := w.sync(ctx, kind); err != nil {
			return err
		}
	}
	for _, watch := range w.watches {
		watch.invoke()
	}
	w.wg.Add(len(w.watches))
	for _, watch := range w.watches {
		go watch.runner()
	}
	return nil
}

func (w *Watcher) sync(ctx context.Context, kind ResourceType) error {
	watch := w.watches[kind]
	resources, err := w.Client.ListQuery(ctx, watch.query)
	for _, r := range resources {
		watch.store.Update(r)
	}
	return err
}

func (w *Watcher) List(kind string) ([]Resource, error) {
	ri, err := w.Client.ResolveResourceType(kind)
	if watch, ok := w.watches[ri]; ok {
		return watch.store.List(), err
	}
	return nil, err
}

func (w *Watcher) Get(kind, qname string) (Resource, error) {
	resources, err := w.List(kind)
	for _, res := range resources {
		if strings.EqualFold(res.QName(), qname) {
			return res, nil
		}
	}
	return Resource{}, err
}

// Stop stops a watch. It is safe to call Stop from multiple goroutines.
func (w *Watcher) Stop() {
	w.mutex.Lock()
	defer w.mutex.Unlock()
	if !w.stopped {
		close(w.stop)
		w.stopped = true
	}
}

func (w *Watcher) Wait(_ context.Context) error { w.wg.Wait(); return nil }

type Waiter struct { // waits for all of the applied resources to be ready
	watcher *Watcher
	kinds   map[ResourceType]map[string]struct{}
}

func (w *Waiter) Wait(ctx context.Context) (bool, error) {
	listener := func(watcher *Watcher) error {
		for kind, names := range w.kinds {
			for name := range names {
				r, err := watcher.Get(kind.String(), name)
				if err != nil {
					return err
				}
				if r["ready"] == true { // Ready(r)
					fmt.Printf("ready: %s/%s\n", r.QKind(), r.QName())
					delete(w.kinds[kind], name)
				}
			}
		}
		if w.isEmpty() {
			watcher.Stop()
		}
		return nil
	}
	for k := range w.kinds {
		if err := w.watcher.WatchQuery(Query{Kind: k.String()}, listener); err != nil {
			return false, err
		}
	}
	if err := w.watcher.Start(ctx); err != nil {
		return false, err
	}
	return w.isEmpty(), w.watcher.Wait(ctx)
}

func (w *Waiter) isEmpty() bool {
	n := 0
	for _, names := range w.kinds {
		n += len(names)
	}
	return n == 0
}

func main() {
	deploy := Resource{"kind": "Deployment.v1.apps", "name": "quote", "namespace": "default", "ready": true}
	cli := &Client{objects: map[string][]Resource{"Deployment.v1.apps": {deploy}}}
	waiter := &Waiter{watcher: cli.Watcher(), kinds: map[ResourceType]map[string]struct{}{
		{Name: "Deployment.v1.apps"}: {"quote.default": {}},
	}}
	ok, err := waiter.Wait(context.Background())
	fmt.Println("all ready:", ok, err)
}
