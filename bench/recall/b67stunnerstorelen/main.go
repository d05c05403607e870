// Command b67stunnerstorelen reproduces the shape of a recursive read-lock
// deadlock shipped in l7mp/stunner-gateway-operator (the Kubernetes Gateway
// API operator of the STUNner media gateway), fixed by PR #72 ("Avoid
// recursive lock").
//
// The renderer lists the global GatewayClass store: GatewayClassStore.GetAll
// calls the embedded Store's Objects, which read-locks storeImpl.lock and, to
// size its result, calls the exported Len, which read-locks storeImpl.lock
// again. The gateway reconciler's Reset write-locks the same store; once that
// writer is queued behind the first read lock, the second RLock waits for the
// writer and the writer waits for the first read lock.
package main

import (
	"fmt"
	"sync"
	"time"
)

// Object is the part of client.Object the store needs.
type Object interface {
	GetNamespace() string
	GetName() string
}

type GatewayClass struct {
	Name           string
	ControllerName string
}

func (g *GatewayClass) GetNamespace() string { return "" }
func (g *GatewayClass) GetName() string      { return g.Name }

// Logger stands in for a logr sink that is slow at high verbosity.
type Logger struct{ latency time.Duration }

func (l Logger) Info(msg string, kv ...any) {
	time.Sleep(l.latency)
	fmt.Println(append([]any{"store:", msg}, kv...)...)
}

// Store is a local object store shared by the operator's controllers.
type Store interface {
	Get(name string) Object
	Upsert(object Object) bool
	Remove(name string)
	Len() int
	Objects() []Object
	Reset(objects []Object)
}

type storeImpl struct {
	lock    sync.RWMutex
	objects map[string]Object
	log     Logger
}

func NewStore(log Logger) Store {
	return &storeImpl{objects: make(map[string]Object), log: log}
}

func key(o Object) string { return o.GetNamespace() + "/" + o.GetName() }

func (s *storeImpl) Get(name string) Object {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return s.objects["/"+name]
}

func (s *storeImpl) Upsert(object Object) bool {
	s.lock.Lock()
	defer s.lock.Unlock()
	_, found := s.objects[key(object)]
	s.objects[key(object)] = object
	return !found
}

func (s *storeImpl) Remove(name string) {
	s.lock.Lock()
	defer s.lock.Unlock()
	delete(s.objects, "/"+name)
}

func (s *storeImpl) Len() int {
	s.lock.RLock()
	defer s.lock.RUnlock()
	return len(s.objects)
}

func (s *storeImpl) Objects() []Object {
	s.lock.RLock()
	defer s.lock.RUnlock()

	s.log.Info("listing objects")
	ret := make([]Object, s.Len())
	i := 0
	for _, o := range s.objects {
		ret[i] = o
		i++
	}
	return ret
}

func (s *storeImpl) Reset(objects []Object) {
	s.lock.Lock()
	defer s.lock.Unlock()
	s.objects = make(map[string]Object, len(objects))
	for _, o := range objects {
		s.objects[key(o)] = o
	}
}

// GatewayClassStore is the typed view on the global GatewayClass store.
type GatewayClassStore struct {
	Store
}

func NewGatewayClassStore() *GatewayClassStore {
	return &GatewayClassStore{Store: NewStore(Logger{latency: 150 * time.Millisecond})}
}

func (s *GatewayClassStore) GetAll() []*GatewayClass {
	ret := make([]*GatewayClass, 0)
	for _, o := range s.Objects() {
		gc, ok := o.(*GatewayClass)
		if !ok {
			panic("access to an invalid object in the global GatewayClassStore")
		}
		ret = append(ret, gc)
	}
	return ret
}

var GatewayClasses = NewGatewayClassStore()

// Renderer turns the stored Gateway API objects into STUNner configs.
type Renderer struct{}

func (r *Renderer) Render(event string) {
	for _, gc := range r.renderGatewayClasses() {
		fmt.Println("render", event, "gatewayclass", gc.Name)
	}
}

func (r *Renderer) renderGatewayClasses() []*GatewayClass {
	return GatewayClasses.GetAll()
}

// gatewayReconciler reloads the store from the API server's view.
type gatewayReconciler struct{ apiServer []Object }

func (g *gatewayReconciler) Reconcile(req string) {
	GatewayClasses.Reset(g.apiServer)
	fmt.Println("reconciled", req)
}

func main() {
	GatewayClasses.Upsert(&GatewayClass{Name: "stunner-gatewayclass", ControllerName: "stunner.l7mp.io/gateway-operator"})
	rec := &gatewayReconciler{apiServer: []Object{
		&GatewayClass{Name: "stunner-gatewayclass", ControllerName: "stunner.l7mp.io/gateway-operator"},
		&GatewayClass{Name: "stunner-udp", ControllerName: "stunner.l7mp.io/gateway-operator"},
	}}
	renderer := &Renderer{}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		renderer.Render("update")
	}()
	go func() {
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		rec.Reconcile("/stunner-udp")
	}()
	wg.Wait()
	fmt.Println("done")
}
