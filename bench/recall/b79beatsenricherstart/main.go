// Project: elastic/beats (metricbeat/module/kubernetes/util/kubernetes.go, shared metadata watchers), 8.x/9.x (version approximate), fixed August 2026.
// Bug: enricher.Start held resourceWatchers.lock across watcher.Start(), and watcher.Start waits for the informer cache to sync, which
// never happens while RBAC denies the LIST call. The only way out is to cancel the watcher through enricher.Stop, but Stop first takes
// resourceWatchers.lock, so a metricset being stopped (config reload or shutdown) blocks forever behind the starting one (PR #52409
// "fix(kubernetes): prevent metadata watcher startup deadlocks": claim the startup under the lock, call watcher.Start without it).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Watcher is the elastic-agent-autodiscover kubernetes.Watcher interface.
type Watcher interface {
	Start() error
	Stop()
}

type informer struct {
	resource string
	mu       sync.Mutex
	synced   bool
}

// Run keeps trying to LIST and WATCH the resource until stopCh is closed.
func (i *informer) Run(stopCh <-chan struct{}) {
	for {
		if err := i.list(); err == nil {
			i.mu.Lock()
			i.synced = true
			i.mu.Unlock()
		}
		select {
		case <-stopCh:
			return
		case <-time.After(200 * time.Millisecond): // reflector backoff
		}
	}
}

func (i *informer) list() error {
	return errors.New(i.resource + ` is forbidden: User "system:serviceaccount:kube-system:metricbeat" cannot list resource`)
}

func (i *informer) HasSynced() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.synced
}

// WaitForCacheSync mirrors client-go's cache.WaitForCacheSync: poll until synced or stopCh is closed.
func WaitForCacheSync(stopCh <-chan struct{}, cacheSyncs ...func() bool) bool {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		synced := true
		for _, f := range cacheSyncs {
			synced = synced && f()
		}
		if synced {
			return true
		}
		select {
		case <-stopCh:
			return false
		case <-tick.C:
		}
	}
}

type watcher struct {
	informer *informer
	ctx      context.Context
	stop     context.CancelFunc
}

func NewNamedWatcher(resource string) Watcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &watcher{informer: &informer{resource: resource}, ctx: ctx, stop: cancel}
}

func (w *watcher) Start() error {
	go w.informer.Run(w.ctx.Done())
	if !WaitForCacheSync(w.ctx.Done(), w.informer.HasSynced) {
		return fmt.Errorf("kubernetes informer unable to sync cache")
	}
	return nil
}

func (w *watcher) Stop() { w.stop() }

type metaWatcher struct {
	watcher         Watcher
	started         bool
	metricsetsUsing []string
}

// Watchers is the registry of watchers shared by all kubernetes metricsets of a module.
type Watchers struct {
	metaWatchersMap map[string]*metaWatcher
	lock            sync.RWMutex
}

type enricher struct {
	sync.RWMutex
	metricsetName, resourceName string
	addResourceMetadata         bool
}

func getExtraWatchers(resourceName string, addResourceMetadata bool) []string {
	if resourceName == "pod" && addResourceMetadata {
		return []string{"namespace", "node"}
	}
	return nil
}

func removeFromMetricsetsUsing(resourceName, notUsingName string, w *Watchers) int {
	data := w.metaWatchersMap[resourceName]
	for i, which := range data.metricsetsUsing {
		if which == notUsingName {
			data.metricsetsUsing = append(data.metricsetsUsing[:i], data.metricsetsUsing[i+1:]...)
			break
		}
	}
	return len(data.metricsetsUsing)
}

func (e *enricher) Start(resourceWatchers *Watchers) {
	resourceWatchers.lock.Lock()
	defer resourceWatchers.lock.Unlock()

	// Extra watchers (namespace, node) are dependencies and start first.
	for _, extra := range getExtraWatchers(e.resourceName, e.addResourceMetadata) {
		if extraMeta := resourceWatchers.metaWatchersMap[extra]; extraMeta != nil && !extraMeta.started {
			if err := extraMeta.watcher.Start(); err == nil {
				extraMeta.started = true
			}
		}
	}
	if resourceMetaWatcher := resourceWatchers.metaWatchersMap[e.resourceName]; resourceMetaWatcher != nil && !resourceMetaWatcher.started {
		if err := resourceMetaWatcher.watcher.Start(); err != nil {
			fmt.Printf("Error starting %s watcher: %s\n", e.resourceName, err)
		} else {
			resourceMetaWatcher.started = true
		}
	}
}

func (e *enricher) Stop(resourceWatchers *Watchers) {
	resourceWatchers.lock.Lock()
	defer resourceWatchers.lock.Unlock()

	if meta := resourceWatchers.metaWatchersMap[e.resourceName]; meta != nil && meta.started {
		if removeFromMetricsetsUsing(e.resourceName, e.metricsetName, resourceWatchers) == 0 {
			meta.watcher.Stop()
			meta.started = false
		}
	}
}

func main() {
	watchers := &Watchers{metaWatchersMap: map[string]*metaWatcher{
		"pod": {watcher: NewNamedWatcher("pods"), metricsetsUsing: []string{"state_pod"}},
	}}
	e := &enricher{metricsetName: "state_pod", resourceName: "pod"}

	fetched := make(chan struct{})
	go func() { // first Fetch of the state_pod metricset
		defer close(fetched)
		e.Start(watchers)
	}()
	time.Sleep(300 * time.Millisecond)
	e.Stop(watchers) // module reload: the metricset is closed
	<-fetched
	fmt.Println("metricset stopped")
}
