// Project: kubernetes/kubernetes (staging/src/k8s.io/apiserver/plugin/pkg/audit/dynamic/dynamic.go,
// dynamic audit backend, v1.13-v1.18)
// Issue: kubernetes/kubernetes#80737 / #80965 (first reports), fixed by kubernetes/kubernetes#84483
// "Fix a double lock bug in staging/.../apiserver".
//
// Bug: the dynamic audit backend serialises changes to its delegate map with
// backend.delegateUpdateMutex. The AuditSink informer's event handlers (AddFunc/UpdateFunc/
// DeleteFunc, registered as func fields of cache.ResourceEventHandlerFuncs in NewBackend) call
// addSink/updateSink/deleteSink, which all do Lock + defer Unlock. Run(stopCh) starts a goroutine
// that, once stopCh is closed, calls stopAllDelegates, which takes delegateUpdateMutex
// (line 228) and closes every delegate's stopChan but never unlocks it. The lock is leaked:
// the next AuditSink event the informer delivers after the backend was stopped calls addSink,
// whose delegateUpdateMutex.Lock (line 265) blocks forever, wedging the informer's handler
// goroutine (and with it every later AuditSink notification).
//
// Fix (#84483): stopAllDelegates does `defer b.delegateUpdateMutex.Unlock()`.
// FIXED twin: stopAllDelegates releases delegateUpdateMutex with a deferred Unlock (#84483).
package main

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
)

// ---------------------------------------------------------------------------
// k8s.io/apimachinery/pkg/types, k8s.io/api/auditregistration/v1alpha1 (trimmed)
// ---------------------------------------------------------------------------

type UID string

type Webhook struct {
	URL string
}

type AuditSinkSpec struct {
	Policy  string
	Webhook Webhook
}

type AuditSink struct {
	Name string
	UID  UID
	Spec AuditSinkSpec
}

// ---------------------------------------------------------------------------
// k8s.io/client-go/tools/cache (trimmed)
// ---------------------------------------------------------------------------

type ResourceEventHandler interface {
	OnAdd(obj interface{})
	OnUpdate(oldObj, newObj interface{})
	OnDelete(obj interface{})
}

// ResourceEventHandlerFuncs is an adaptor to let you easily specify as many or
// as few of the notification functions as you want while still implementing
// ResourceEventHandler.
type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj interface{})
	UpdateFunc func(oldObj, newObj interface{})
	DeleteFunc func(obj interface{})
}

func (r ResourceEventHandlerFuncs) OnAdd(obj interface{}) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

func (r ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj interface{}) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

func (r ResourceEventHandlerFuncs) OnDelete(obj interface{}) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

type notification struct {
	kind     string
	old, obj interface{}
}

// sharedIndexInformer delivers notifications to its handlers from a single
// processor goroutine (processorListener.run in client-go).
type sharedIndexInformer struct {
	handlers  []ResourceEventHandler
	nextCh    chan notification
	processed chan struct{}
}

func newAuditSinkInformer() *sharedIndexInformer {
	return &sharedIndexInformer{
		nextCh:    make(chan notification),
		processed: make(chan struct{}),
	}
}

func (s *sharedIndexInformer) AddEventHandler(handler ResourceEventHandler) {
	s.handlers = append(s.handlers, handler)
}

func (s *sharedIndexInformer) Run(stopCh <-chan struct{}) {
	for {
		select {
		case n := <-s.nextCh:
			for _, h := range s.handlers {
				switch n.kind {
				case "add":
					h.OnAdd(n.obj)
				case "update":
					h.OnUpdate(n.old, n.obj)
				case "delete":
					h.OnDelete(n.obj)
				}
			}
			s.processed <- struct{}{}
		case <-stopCh:
			return
		}
	}
}

// ---------------------------------------------------------------------------
// k8s.io/apiserver/pkg/audit (trimmed)
// ---------------------------------------------------------------------------

type Backend interface {
	Run(stopCh <-chan struct{}) error
	Shutdown()
	String() string
}

// bufferedBackend stands in for the webhook+buffered backend built per sink.
type bufferedBackend struct {
	name       string
	shutdownCh chan struct{}
}

func (b *bufferedBackend) Run(stopCh <-chan struct{}) error {
	go func() {
		<-stopCh
		close(b.shutdownCh)
	}()
	return nil
}

// Shutdown blocks until stopCh passed to Run is closed and the buffer flushed.
func (b *bufferedBackend) Shutdown() { <-b.shutdownCh }

func (b *bufferedBackend) String() string { return b.name }

// ---------------------------------------------------------------------------
// k8s.io/apiserver/plugin/pkg/audit/dynamic
// ---------------------------------------------------------------------------

type Config struct {
	Informer *sharedIndexInformer
}

type backend struct {
	// delegates holds the current active webhook backends
	delegates atomic.Value
	// delegateUpdateMutex prevents simultaneous updates to delegates
	delegateUpdateMutex sync.Mutex
	config              *Config
}

type delegate struct {
	Backend
	configuration AuditSink
	stopChan      chan struct{}
}

// gracefulShutdown will gracefully shutdown the delegate
func (d *delegate) gracefulShutdown() {
	close(d.stopChan)
	d.Shutdown()
}

// syncedDelegates is a map of delegate backends keyed by UID
type syncedDelegates map[UID]*delegate

// NewBackend returns a backend that dynamically updates its configuration
// based on a shared informer.
func NewBackend(c *Config) (Backend, error) {
	manager := &backend{
		config:              c,
		delegates:           atomic.Value{},
		delegateUpdateMutex: sync.Mutex{},
	}
	manager.delegates.Store(syncedDelegates{})

	c.Informer.AddEventHandler(ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			manager.addSink(obj.(*AuditSink))
		},
		UpdateFunc: func(oldObj, newObj interface{}) {
			manager.updateSink(oldObj.(*AuditSink), newObj.(*AuditSink))
		},
		DeleteFunc: func(obj interface{}) {
			manager.deleteSink(obj.(*AuditSink))
		},
	})
	return manager, nil
}

// Run starts a goroutine that propagates the shutdown signal,
// individual delegates are ran as they are created.
func (b *backend) Run(stopCh <-chan struct{}) error {
	go func() {
		<-stopCh
		b.stopAllDelegates()
	}()
	return nil
}

// stopAllDelegates closes the stopChan for every delegate to enable
// goroutines to terminate gracefully. This is a helper method to propagate
// the primary stopChan to the current delegate map.
func (b *backend) stopAllDelegates() {
	b.delegateUpdateMutex.Lock()
	defer b.delegateUpdateMutex.Unlock()
	for _, d := range b.GetDelegates() {
		close(d.stopChan)
	}
}

// Shutdown calls the shutdown method on all delegates. The stopChan should
// be closed before this is called.
func (b *backend) Shutdown() {
	for _, d := range b.GetDelegates() {
		d.Shutdown()
	}
}

func (b *backend) String() string { return "dynamic" }

// GetDelegates retrieves current delegates in a safe manner
func (b *backend) GetDelegates() syncedDelegates {
	return b.delegates.Load().(syncedDelegates)
}

// copyDelegates returns a copied delegate map
func (b *backend) copyDelegates() syncedDelegates {
	c := make(syncedDelegates)
	for u, s := range b.GetDelegates() {
		c[u] = s
	}
	return c
}

// setDelegates sets the current delegates in a safe manner
func (b *backend) setDelegates(delegates syncedDelegates) {
	b.delegates.Store(delegates)
}

// addSink is called by the shared informer when a sink is added
func (b *backend) addSink(sink *AuditSink) {
	b.delegateUpdateMutex.Lock()
	defer b.delegateUpdateMutex.Unlock()
	delegates := b.copyDelegates()
	if _, ok := delegates[sink.UID]; ok {
		return
	}
	d, err := b.createAndStartDelegate(sink)
	if err != nil {
		return
	}
	delegates[sink.UID] = d
	b.setDelegates(delegates)
}

// updateSink is called by the shared informer when a sink is updated.
func (b *backend) updateSink(oldSink, newSink *AuditSink) {
	b.delegateUpdateMutex.Lock()
	defer b.delegateUpdateMutex.Unlock()
	delegates := b.copyDelegates()
	oldDelegate, ok := delegates[oldSink.UID]
	if !ok {
		return
	}

	// check if spec has changed
	eq := reflect.DeepEqual(oldSink.Spec, newSink.Spec)
	if eq {
		delete(delegates, oldSink.UID)
		delegates[newSink.UID] = oldDelegate
		b.setDelegates(delegates)
	} else {
		d, err := b.createAndStartDelegate(newSink)
		if err != nil {
			return
		}
		delete(delegates, oldSink.UID)
		delegates[newSink.UID] = d
		b.setDelegates(delegates)

		// graceful shutdown in goroutine as to not block
		go oldDelegate.gracefulShutdown()
	}
}

// deleteSink is called by the shared informer when a sink is deleted
func (b *backend) deleteSink(sink *AuditSink) {
	b.delegateUpdateMutex.Lock()
	defer b.delegateUpdateMutex.Unlock()
	delegates := b.copyDelegates()
	delegate, ok := delegates[sink.UID]
	if !ok {
		return
	}
	delete(delegates, sink.UID)
	b.setDelegates(delegates)

	// graceful shutdown in goroutine as to not block
	go delegate.gracefulShutdown()
}

// createAndStartDelegate will build a delegate from an audit sink configuration and run it
func (b *backend) createAndStartDelegate(sink *AuditSink) (*delegate, error) {
	if sink.Spec.Webhook.URL == "" {
		return nil, errors.New("no webhook client config")
	}
	d := &delegate{
		Backend:       &bufferedBackend{name: sink.Name, shutdownCh: make(chan struct{})},
		configuration: *sink,
		stopChan:      make(chan struct{}),
	}
	if err := d.Run(d.stopChan); err != nil {
		return nil, err
	}
	return d, nil
}

// ---------------------------------------------------------------------------
// test driver
// ---------------------------------------------------------------------------

func main() {
	informer := newAuditSinkInformer()
	informerStop := make(chan struct{})
	go informer.Run(informerStop)

	b, err := NewBackend(&Config{Informer: informer})
	if err != nil {
		panic(err)
	}

	// An AuditSink exists when the apiserver starts.
	informer.nextCh <- notification{kind: "add", obj: &AuditSink{
		Name: "sink-a", UID: "uid-a",
		Spec: AuditSinkSpec{Policy: "Metadata", Webhook: Webhook{URL: "https://a.example"}},
	}}
	<-informer.processed

	// The audit backend is stopped (stopCh closed) and shut down.
	stopCh := make(chan struct{})
	if err := b.Run(stopCh); err != nil {
		panic(err)
	}
	close(stopCh)
	b.Shutdown() // returns once stopAllDelegates has closed every delegate's stopChan

	// The informer keeps delivering AuditSink events.
	informer.nextCh <- notification{kind: "add", obj: &AuditSink{
		Name: "sink-b", UID: "uid-b",
		Spec: AuditSinkSpec{Policy: "Request", Webhook: Webhook{URL: "https://b.example"}},
	}}
	<-informer.processed

	close(informerStop)
	fmt.Println("delegates after stop:", len(b.(*backend).GetDelegates()))
}
