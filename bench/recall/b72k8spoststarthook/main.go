// Command b72k8spoststarthook models the post-start hook registry of the
// Kubernetes generic apiserver (staging/src/k8s.io/apiserver/pkg/server,
// hooks.go): AddPostStartHook, RunPostStartHooks, the postStartHooks map of
// postStartHookEntry values and postStartHookLock.
//
// Modelled on kubernetes (apiserver), no specific upstream bug.
// RunPostStartHooks takes postStartHookLock, marks the hooks as called and
// then runs every hook func it looks up in the postStartHooks map. Upstream
// each hook is started in its own goroutine; here they run inline while the
// lock is held. The aggregator's discovery hook asks its delegation target
// whether the apiextensions informer hook is registered, and
// GenericAPIServer.HasPostStartHook takes postStartHookLock again from the
// goroutine that already holds it, so the server never finishes starting.
//
// The fixed twin copies the hook entries under postStartHookLock, releases it,
// and only then runs the hooks.
package main

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

type PostStartHookContext struct {
	LoopbackClientConfig string
	StopCh               <-chan struct{}
}

type PostStartHookFunc func(context PostStartHookContext) error

type postStartHookEntry struct {
	hook PostStartHookFunc
	done chan struct{}
}

type HealthChecker interface {
	Name() string
	Check() error
}

type postStartHookHealthz struct {
	name string
	done chan struct{}
}

func (h postStartHookHealthz) Name() string { return h.name }

func (h postStartHookHealthz) Check() error {
	select {
	case <-h.done:
		return nil
	default:
		return errors.New("not finished")
	}
}

type DelegationTarget interface {
	HasPostStartHook(name string) bool
	HealthzChecks() []HealthChecker
}

type GenericAPIServer struct {
	postStartHookLock    sync.Mutex
	postStartHooks       map[string]postStartHookEntry
	postStartHooksCalled bool

	healthzLock   sync.Mutex
	healthzChecks []HealthChecker

	LoopbackClientConfig string
}

func NewGenericAPIServer() *GenericAPIServer {
	return &GenericAPIServer{postStartHooks: map[string]postStartHookEntry{}, LoopbackClientConfig: "https://127.0.0.1:6443"}
}

func (s *GenericAPIServer) AddHealthChecks(checks ...HealthChecker) {
	s.healthzLock.Lock()
	defer s.healthzLock.Unlock()
	s.healthzChecks = append(s.healthzChecks, checks...)
}

func (s *GenericAPIServer) HealthzChecks() []HealthChecker {
	s.healthzLock.Lock()
	defer s.healthzLock.Unlock()
	return append([]HealthChecker(nil), s.healthzChecks...)
}

func (s *GenericAPIServer) AddPostStartHook(name string, hook PostStartHookFunc) error {
	s.postStartHookLock.Lock()
	defer s.postStartHookLock.Unlock()
	if s.postStartHooksCalled {
		return fmt.Errorf("unable to add %q because PostStartHooks have already been called", name)
	}
	if _, exists := s.postStartHooks[name]; exists {
		return fmt.Errorf("unable to add %q because it was already registered", name)
	}
	done := make(chan struct{})
	s.AddHealthChecks(postStartHookHealthz{name: "poststarthook/" + name, done: done})
	s.postStartHooks[name] = postStartHookEntry{hook: hook, done: done}
	return nil
}

func (s *GenericAPIServer) isPostStartHookRegistered(name string) bool {
	s.postStartHookLock.Lock()
	defer s.postStartHookLock.Unlock()
	_, exists := s.postStartHooks[name]
	return exists
}

func (s *GenericAPIServer) HasPostStartHook(name string) bool {
	return s.isPostStartHookRegistered(name)
}

func (s *GenericAPIServer) RunPostStartHooks(stopCh <-chan struct{}) {
	s.postStartHookLock.Lock()
	defer s.postStartHookLock.Unlock()
	s.postStartHooksCalled = true
	context := PostStartHookContext{LoopbackClientConfig: s.LoopbackClientConfig, StopCh: stopCh}
	names := make([]string, 0, len(s.postStartHooks))
	for name := range s.postStartHooks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		runPostStartHook(name, s.postStartHooks[name], context)
	}
}

func runPostStartHook(name string, entry postStartHookEntry, context PostStartHookContext) {
	if err := entry.hook(context); err != nil {
		fmt.Printf("PostStartHook %q failed: %v\n", name, err)
		return
	}
	close(entry.done)
}

type APIAggregator struct {
	delegate    DelegationTarget
	waitForCRDs bool
}

func (a *APIAggregator) discoveryDependencies() []string {
	var deps []string
	if a.delegate.HasPostStartHook("start-apiextensions-informers") {
		deps = append(deps, "customresourcedefinitions")
	}
	return deps
}

func (a *APIAggregator) startDiscoveryController(ctx PostStartHookContext) error {
	deps := a.discoveryDependencies()
	a.waitForCRDs = len(deps) > 0
	fmt.Println("discovery controller started against", ctx.LoopbackClientConfig, "deps", deps)
	return nil
}

func main() {
	s := NewGenericAPIServer()
	agg := &APIAggregator{delegate: s}

	registered := make(chan struct{})
	go func() {
		defer close(registered)
		for _, name := range []string{"start-apiextensions-informers", "start-apiextensions-controllers"} {
			if err := s.AddPostStartHook(name, func(PostStartHookContext) error { return nil }); err != nil {
				fmt.Println(err)
			}
		}
	}()
	<-registered

	if err := s.AddPostStartHook("apiservice-discovery-controller", agg.startDiscoveryController); err != nil {
		fmt.Println(err)
	}

	stopCh := make(chan struct{})
	s.RunPostStartHooks(stopCh)
	for _, c := range s.HealthzChecks() {
		if err := c.Check(); err != nil {
			fmt.Println(c.Name(), "failed:", err)
		}
	}
	fmt.Println("apiserver ready, waitForCRDs =", agg.waitForCRDs)
	close(stopCh)
}
