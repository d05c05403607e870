// Project: openshift/origin (pkg/router/template/router.go, pkg/util/ratelimiter/ratelimiter.go, vendored k8s pkg/client/cache/fifo.go), OpenShift 3.5/3.6, April 2017.
// Bug: templateRouter.Commit holds the router lock while it queues a reload through RateLimitedFunction.Invoke, which takes the FIFO lock, while the rate limiter goroutine pops the queued reload inside FIFO.Pop (FIFO lock held) and runs commitAndReload, which takes the router lock. The route event handler and the reload goroutine deadlock AB-BA (PR #13717, backport #13744, "Prevent the router from deadlocking itself when calling Commit()"); the fix releases the router lock before Invoke.
// Fix applied here: Commit records needsCommit under the router lock and calls Invoke after unlocking.
package b104originroutercommitfixed

import (
	"sync"
	"testing"
)

// ---- k8s.io/kubernetes/pkg/client/cache (vendored FIFO) ----

type KeyFunc func(obj interface{}) (string, error)

type PopProcessFunc func(interface{}) error

type Queue interface {
	AddIfNotPresent(obj interface{}) error
	Pop(process PopProcessFunc) (interface{}, error)
}

type FIFO struct {
	lock    sync.RWMutex
	cond    sync.Cond
	items   map[string]interface{}
	queue   []string
	keyFunc KeyFunc
}

func NewFIFO(keyFunc KeyFunc) *FIFO {
	f := &FIFO{items: map[string]interface{}{}, keyFunc: keyFunc}
	f.cond.L = &f.lock
	return f
}

func (f *FIFO) AddIfNotPresent(obj interface{}) error {
	id, err := f.keyFunc(obj)
	if err != nil {
		return err
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.addIfNotPresent(id, obj)
	return nil
}

func (f *FIFO) addIfNotPresent(id string, obj interface{}) {
	if _, exists := f.items[id]; exists {
		return
	}
	f.queue = append(f.queue, id)
	f.items[id] = obj
	f.cond.Broadcast()
}

// Pop calls process with the FIFO lock held.
func (f *FIFO) Pop(process PopProcessFunc) (interface{}, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	for {
		for len(f.queue) == 0 {
			f.cond.Wait()
		}
		id := f.queue[0]
		f.queue = f.queue[1:]
		item, ok := f.items[id]
		if !ok {
			continue
		}
		delete(f.items, id)
		return item, process(item)
	}
}

// ---- k8s.io/kubernetes/pkg/util/flowcontrol ----

type RateLimiter interface{ Accept() }

type noopLimiter struct{}

func (noopLimiter) Accept() {}

// ---- pkg/util/ratelimiter ----

type HandlerFunc func() error

type RateLimitedFunction struct {
	Handler HandlerFunc
	queue   Queue
	RateLimiter
}

func NewRateLimitedFunction(keyFunc KeyFunc, limiter RateLimiter, handlerFunc HandlerFunc) *RateLimitedFunction {
	return &RateLimitedFunction{handlerFunc, NewFIFO(keyFunc), limiter}
}

// pop is one iteration of the background loop started by RunUntil.
func (rlf *RateLimitedFunction) pop() {
	rlf.RateLimiter.Accept()
	rlf.queue.Pop(func(_ interface{}) error {
		return rlf.Handler()
	})
}

func (rlf *RateLimitedFunction) Invoke(resource interface{}) {
	rlf.queue.AddIfNotPresent(resource)
}

// ---- pkg/router/template ----

type ServiceAliasConfig struct{ Host string }

type routerInterface interface {
	AddRoute(id string, cfg ServiceAliasConfig)
	Commit()
}

type templateRouter struct {
	lock                      sync.Mutex
	state                     map[string]ServiceAliasConfig
	synced                    bool
	stateChanged              bool
	rateLimitedCommitFunction *RateLimitedFunction
	reloads                   int
}

func newTemplateRouter(keyFunc KeyFunc, limiter RateLimiter) *templateRouter {
	r := &templateRouter{state: map[string]ServiceAliasConfig{}}
	r.rateLimitedCommitFunction = NewRateLimitedFunction(keyFunc, limiter, r.commitAndReload)
	return r
}

func (r *templateRouter) AddRoute(id string, cfg ServiceAliasConfig) {
	r.lock.Lock()
	defer r.lock.Unlock()
	r.state[id] = cfg
	r.stateChanged = true
}

func (r *templateRouter) Commit() {
	r.lock.Lock()

	if !r.synced {
		r.synced = true
		r.stateChanged = true
	}
	needsCommit := r.stateChanged
	r.lock.Unlock()

	if needsCommit {
		r.rateLimitedCommitFunction.Invoke(r.rateLimitedCommitFunction)
	}
}

func (r *templateRouter) commitAndReload() error {
	r.lock.Lock()
	defer r.lock.Unlock()
	r.stateChanged = false
	r.writeState()
	r.writeConfig()
	r.reloads++
	return nil
}

func (r *templateRouter) writeState()  {}
func (r *templateRouter) writeConfig() {}

type TemplatePlugin struct{ Router routerInterface }

func (p *TemplatePlugin) HandleRoute(id, host string) {
	p.Router.AddRoute(id, ServiceAliasConfig{Host: host})
}

func (p *TemplatePlugin) Commit() { p.Router.Commit() }

func TestB104originroutercommitFixed(t *testing.T) {
	var onKey func()
	keyFunc := func(_ interface{}) (string, error) {
		if onKey != nil {
			onKey()
		}
		return "router", nil
	}
	router := newTemplateRouter(keyFunc, noopLimiter{})
	plugin := &TemplatePlugin{Router: router}
	rlf := router.rateLimitedCommitFunction

	// A reload is already pending from the initial sync.
	rlf.Invoke(rlf)

	inInvoke := make(chan struct{})
	inReload := make(chan struct{})
	onKey = func() { close(inInvoke); <-inReload }
	reload := rlf.Handler
	rlf.Handler = func() error { <-inInvoke; close(inReload); return reload() }

	reloaderDone := make(chan struct{})
	go func() { // rate limiter background goroutine
		rlf.pop()
		close(reloaderDone)
	}()
	eventsDone := make(chan struct{})
	go func() { // route watch event handler
		plugin.HandleRoute("ns/route", "www.example.com")
		plugin.Commit()
		close(eventsDone)
	}()
	<-reloaderDone
	<-eventsDone
}
