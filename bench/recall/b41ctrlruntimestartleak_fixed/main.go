// Project: kubernetes-sigs/controller-runtime, file
// pkg/internal/controller/controller.go (Controller.Start / Controller.Watch).
// The early return was added by PR #1139 ("Controller: Return error when
// started more than once", v0.7) and fixed by PR #3545 ("Unlock when
// Controller.Start() returns with error"; first proposed in PR #3502).
//
// Controller.Start takes c.mu (line 128) outside the IIFE that normally
// releases it ("lock outside to get proper handling of the queue shutdown").
// When the controller has already been started - e.g. it was added to the
// manager twice, so the runnable group calls Start a second time - Start
// returns the "controller was started more than once" error straight away,
// before the IIFE's deferred c.mu.Unlock() is set up, so c.mu stays locked
// forever. The first Start keeps running the workers, but any later
// Controller.Watch (controllers add watches dynamically after start) blocks
// on c.mu at line 103. The fix unlocks c.mu before returning the error.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// ---- minimal workqueue / source / handler stand-ins ----

type RateLimitingInterface interface {
	Add(item interface{})
	ShutDown()
}

type queue struct {
	mu           sync.Mutex
	items        []interface{}
	shuttingDown bool
}

func (q *queue) Add(item interface{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.shuttingDown {
		q.items = append(q.items, item)
	}
}

func (q *queue) ShutDown() {
	q.mu.Lock()
	q.shuttingDown = true
	q.mu.Unlock()
}

type EventHandler interface {
	Create(obj string, q RateLimitingInterface)
}

type EnqueueRequestForObject struct{}

func (e *EnqueueRequestForObject) Create(obj string, q RateLimitingInterface) { q.Add(obj) }

type Predicate interface{ Create(obj string) bool }

type Source interface {
	Start(ctx context.Context, h EventHandler, q RateLimitingInterface, prct ...Predicate) error
}

// Kind is source.Kind: it registers an informer handler for one type.
type Kind struct {
	Type    string
	started bool
}

func (ks *Kind) Start(ctx context.Context, h EventHandler, q RateLimitingInterface, prct ...Predicate) error {
	ks.started = true
	h.Create(ks.Type+"/initial", q)
	return nil
}

type watchDescription struct {
	src        Source
	handler    EventHandler
	predicates []Predicate
}

// ---- pkg/internal/controller ----

type Controller struct {
	Name                    string
	MaxConcurrentReconciles int
	MakeQueue               func() RateLimitingInterface
	Queue                   RateLimitingInterface
	SetFields               func(i interface{}) error

	mu           sync.Mutex
	Started      bool
	ctx          context.Context
	startWatches []watchDescription
}

// Watch implements controller.Controller.
func (c *Controller) Watch(src Source, evthdler EventHandler, prct ...Predicate) error {
	c.mu.Lock()
	defer c.mu.Unlock()

	// Inject Cache into arguments
	if err := c.SetFields(src); err != nil {
		return err
	}
	if err := c.SetFields(evthdler); err != nil {
		return err
	}

	// Controller hasn't started yet, store the watches locally and return.
	if !c.Started {
		c.startWatches = append(c.startWatches, watchDescription{src: src, handler: evthdler, predicates: prct})
		return nil
	}

	fmt.Println("Starting EventSource", c.Name)
	return src.Start(c.ctx, evthdler, c.Queue, prct...)
}

// Start implements controller.Controller.
func (c *Controller) Start(ctx context.Context) error {
	// use an IIFE to get proper lock handling
	// but lock outside to get proper handling of the queue shutdown
	c.mu.Lock()
	if c.Started {
		c.mu.Unlock()
		return errors.New("controller was started more than once. This is likely to be caused by being added to a manager multiple times")
	}
	// Set the internal context.
	c.ctx = ctx

	c.Queue = c.MakeQueue()
	go func() {
		<-ctx.Done()
		c.Queue.ShutDown()
	}()

	err := func() error {
		defer c.mu.Unlock()

		// NB(directxman12): launch the sources *before* trying to wait for the
		// caches to sync so that they have a chance to register their intendeded
		// caches.
		for _, watch := range c.startWatches {
			if err := watch.src.Start(ctx, watch.handler, c.Queue, watch.predicates...); err != nil {
				return err
			}
		}

		// Launch workers to process resources (elided: MaxConcurrentReconciles
		// goroutines running processNextWorkItem).
		c.Started = true
		return nil
	}()
	if err != nil {
		return err
	}

	<-ctx.Done()
	return nil
}

// ---- pkg/manager (runnable group, trimmed) ----

type Runnable interface {
	Start(ctx context.Context) error
}

type controllerManager struct {
	runnables []Runnable
}

func (cm *controllerManager) Add(r Runnable) { cm.runnables = append(cm.runnables, r) }

func (cm *controllerManager) Start(ctx context.Context) {
	for _, r := range cm.runnables {
		go func(r Runnable) {
			if err := r.Start(ctx); err != nil {
				fmt.Println("runnable error:", err)
			}
		}(r)
	}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	ctrl := &Controller{
		Name:                    "configmap-controller",
		MaxConcurrentReconciles: 1,
		MakeQueue:               func() RateLimitingInterface { return &queue{} },
		SetFields:               func(i interface{}) error { return nil },
	}
	if err := ctrl.Watch(&Kind{Type: "ConfigMap"}, &EnqueueRequestForObject{}); err != nil {
		fmt.Println(err)
		return
	}

	mgr := &controllerManager{}
	mgr.Add(ctrl)
	mgr.Add(ctrl) // the same controller registered twice
	mgr.Start(ctx)
	time.Sleep(100 * time.Millisecond)

	// A reconciler adds a watch after the controller is running.
	done := make(chan error, 1)
	go func() { done <- ctrl.Watch(&Kind{Type: "Secret"}, &EnqueueRequestForObject{}) }()

	select {
	case err := <-done:
		fmt.Println("dynamic watch added:", err)
	case <-time.After(2 * time.Second):
		fmt.Println("DEADLOCK")
		os.Exit(2)
	}
}
