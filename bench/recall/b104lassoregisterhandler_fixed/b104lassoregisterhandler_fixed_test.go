// Project: rancher/lasso (pkg/controller/sharedcontroller.go, sharedhandler.go, handlertransaction.go), the controller framework of rancher/rancher, shipped to Rancher 2.6 and fixed in December 2021 (lasso commit 3c6118a, picked up by rancher/rancher PR #35908 "Update lasso for deadlock fix").
// Bug: sharedController.RegisterHandler takes startLock for its whole body and, when the shared controller is already started, calls initController to get the controller whose keys it re-enqueues; initController takes startLock again, so registering a handler on a running shared controller (as Rancher does for dynamically started controllers) self-deadlocks the registering goroutine and every later Start, Enqueue or Informer call on that kind.
// Fix applied here: RegisterHandler calls initController before taking startLock and registers the handler before locking.
package b104lassoregisterhandlerfixed

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

type Store interface{ ListKeys() []string }

type SharedIndexInformer interface{ GetStore() Store }

type Controller interface {
	Start(ctx context.Context, workers int) error
	Enqueue(namespace, name string)
	EnqueueKey(key string)
	Informer() SharedIndexInformer
}

type keyStore struct{ keys []string }

func (k *keyStore) ListKeys() []string       { return k.keys }
func (k *keyStore) GetStore() Store          { return k }
func (k *keyStore) add(key string) *keyStore { k.keys = append(k.keys, key); return k }

// controller is the per-kind workqueue controller that the shared controller wraps.
type controller struct {
	informer *keyStore
	mu       sync.Mutex
	queue    []string
	started  bool
}

func (c *controller) Start(ctx context.Context, workers int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started = true
	return nil
}
func (c *controller) Enqueue(namespace, name string) { c.EnqueueKey(namespace + "/" + name) }
func (c *controller) EnqueueKey(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queue = append(c.queue, key)
}
func (c *controller) Informer() SharedIndexInformer { return c.informer }

type SharedControllerHandler interface {
	OnChange(key string, obj interface{}) (interface{}, error)
}

type SharedControllerHandlerFunc func(key string, obj interface{}) (interface{}, error)

func (s SharedControllerHandlerFunc) OnChange(key string, obj interface{}) (interface{}, error) {
	return s(key, obj)
}

type handlerEntry struct {
	id      int64
	name    string
	handler SharedControllerHandler
}

type sharedHandler struct {
	idCounter int64
	lock      sync.RWMutex
	handlers  []handlerEntry
}

func (h *sharedHandler) Register(ctx context.Context, name string, handler SharedControllerHandler) {
	h.lock.Lock()
	defer h.lock.Unlock()
	id := atomic.AddInt64(&h.idCounter, 1)
	h.handlers = append(h.handlers, handlerEntry{id: id, name: name, handler: handler})
	go func() {
		<-ctx.Done()
		h.lock.Lock()
		defer h.lock.Unlock()
		for i := range h.handlers {
			if h.handlers[i].id == id {
				h.handlers = append(h.handlers[:i], h.handlers[i+1:]...)
				break
			}
		}
	}()
}

type hTransactionKey struct{}

type HandlerTransaction struct {
	lock sync.Mutex
	todo []func()
}

func (h *HandlerTransaction) do(f func()) {
	if h == nil {
		f()
		return
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	h.todo = append(h.todo, f)
}

func getHandlerTransaction(ctx context.Context) *HandlerTransaction {
	v, _ := ctx.Value(hTransactionKey{}).(*HandlerTransaction)
	return v
}

type sharedController struct {
	deferredController func() (Controller, error)
	controller         Controller
	handler            *sharedHandler
	startLock          sync.Mutex
	started            bool
	startError         error
}

func (s *sharedController) EnqueueKey(key string)         { s.initController().EnqueueKey(key) }
func (s *sharedController) Informer() SharedIndexInformer { return s.initController().Informer() }

func (s *sharedController) initController() Controller {
	s.startLock.Lock()
	defer s.startLock.Unlock()
	if s.controller != nil {
		return s.controller
	}
	controller, err := s.deferredController()
	s.startError = err
	s.controller = controller
	return s.controller
}

func (s *sharedController) Start(ctx context.Context, workers int) error {
	s.startLock.Lock()
	defer s.startLock.Unlock()
	if s.startError != nil || s.controller == nil {
		return s.startError
	}
	if err := s.controller.Start(ctx, workers); err != nil {
		return err
	}
	s.started = true
	go func() {
		<-ctx.Done()
		s.startLock.Lock()
		defer s.startLock.Unlock()
		s.started = false
	}()
	return nil
}

func (s *sharedController) RegisterHandler(ctx context.Context, name string, handler SharedControllerHandler) {
	// Ensure that controller is initialized
	c := s.initController()

	getHandlerTransaction(ctx).do(func() {
		s.handler.Register(ctx, name, handler)

		s.startLock.Lock()
		defer s.startLock.Unlock()
		if s.started {
			for _, key := range c.Informer().GetStore().ListKeys() {
				c.EnqueueKey(key)
			}
		}
	})
}

// sharedControllerFactory hands out one shared controller per kind.
type sharedControllerFactory struct {
	lock        sync.Mutex
	controllers map[string]*sharedController
}

func (f *sharedControllerFactory) ForKind(gvk string, objects *keyStore) *sharedController {
	f.lock.Lock()
	defer f.lock.Unlock()
	if c, ok := f.controllers[gvk]; ok {
		return c
	}
	c := &sharedController{
		handler:            &sharedHandler{},
		deferredController: func() (Controller, error) { return &controller{informer: objects}, nil },
	}
	f.controllers[gvk] = c
	return c
}

func (f *sharedControllerFactory) Start(ctx context.Context, workers int) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	for _, c := range f.controllers {
		if err := c.Start(ctx, workers); err != nil {
			return err
		}
	}
	return nil
}

func TestB104lassoregisterhandlerFixed(t *testing.T) {
	ctx := context.Background()
	factory := &sharedControllerFactory{controllers: map[string]*sharedController{}}
	clusters := factory.ForKind("management.cattle.io/v3, Kind=Cluster", (&keyStore{}).add("local").add("c-m-abc"))
	noop := SharedControllerHandlerFunc(func(key string, obj interface{}) (interface{}, error) { return obj, nil })

	_ = clusters.Informer() // listers are built before the factory starts
	clusters.RegisterHandler(ctx, "cluster-deploy", noop)
	if err := factory.Start(ctx, 5); err != nil {
		t.Fatal(err)
	}
	// A controller registered after startup (for example one started for a
	// newly imported downstream cluster) adds a handler to the running kind.
	clusters.RegisterHandler(ctx, "cluster-agent-handler", noop)
}
