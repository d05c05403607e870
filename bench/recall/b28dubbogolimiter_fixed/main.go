// Project: apache/dubbo-go v3.0.0 (filter/adaptivesvc/filter.go, filter/adaptivesvc/limiter_mapper.go)
// Bug:     issue #2038 "adaptivesvc/limiter_mapper.go may cause dead lock" (fix: PR #2053, defer Unlock).
//
// The provider-side adaptive-service filter looks up the per-method limiter
// with limiterMapper.getMethodLimiter (RLock) and, on ErrLimiterNotFoundOnMapper,
// creates one with newAndSetMethodLimiter (Lock). When the first two requests
// for a method race, both miss, and the second newAndSetMethodLimiter finds the
// limiter the first one stored and returns it early without releasing the write
// lock (the unknown-limiter-type error path leaks it the same way). From then on
// every request through the filter blocks in getMethodLimiter's RLock (the
// report saw 1165 goroutines parked there).
// Deadlocking acquisition: m.rwMutex.RLock() in limiterMapper.getMethodLimiter.
// FIXED twin: newAndSetMethodLimiter releases the lock with defer m.rwMutex.Unlock().
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type URL struct{ Path string }

type Invocation interface {
	MethodName() string
	GetAttachmentWithDefaultValue(key, defaultValue string) string
	SetAttribute(key string, value interface{})
}

type Result struct{ Err error }

type Invoker interface {
	GetURL() *URL
	Invoke(ctx context.Context, invocation Invocation) *Result
}

// ---- filter/adaptivesvc/limiter ----
const HillClimbingLimiter = iota

type Limiter interface{ Acquire() (Updater, error) }
type Updater interface{ DoUpdate() error }

// HillClimbing is the adaptive concurrency limiter (algorithm elided).
type HillClimbing struct{ inflight atomic.Int64 }

func NewHillClimbing() *HillClimbing              { return &HillClimbing{} }
func (l *HillClimbing) Acquire() (Updater, error) { l.inflight.Add(1); return l, nil }
func (l *HillClimbing) DoUpdate() error           { l.inflight.Add(-1); return nil }

// ---- filter/adaptivesvc/limiter_mapper.go ----
var (
	limiterMapperSingleton     = newLimiterMapper()
	ErrLimiterNotFoundOnMapper = errors.New("limiter not found on mapper")
	ErrLimiterTypeNotFound     = errors.New("limiter type not found")
)

type limiterMapper struct {
	rwMutex *sync.RWMutex
	mapper  map[string]Limiter
}

func newLimiterMapper() *limiterMapper {
	return &limiterMapper{rwMutex: new(sync.RWMutex), mapper: make(map[string]Limiter)}
}

func (m *limiterMapper) newAndSetMethodLimiter(url *URL, methodName string, limiterType int) (Limiter, error) {
	key := fmt.Sprintf("%s%s", url.Path, methodName)
	var (
		l  Limiter
		ok bool
	)
	m.rwMutex.Lock()
	defer m.rwMutex.Unlock()
	if l, ok = limiterMapperSingleton.mapper[key]; ok {
		return l, nil
	}
	switch limiterType {
	case HillClimbingLimiter:
		l = NewHillClimbing()
	default:
		return nil, ErrLimiterTypeNotFound
	}
	limiterMapperSingleton.mapper[key] = l
	return l, nil
}

func (m *limiterMapper) getMethodLimiter(url *URL, methodName string) (Limiter, error) {
	key := fmt.Sprintf("%s%s", url.Path, methodName)
	m.rwMutex.RLock() // blocks forever once newAndSetMethodLimiter leaked the write lock
	l, ok := limiterMapperSingleton.mapper[key]
	m.rwMutex.RUnlock()
	if !ok {
		return nil, ErrLimiterNotFoundOnMapper
	}
	return l, nil
}

// ---- filter/adaptivesvc/filter.go ----
type adaptiveServiceProviderFilter struct{}

func (f *adaptiveServiceProviderFilter) Invoke(ctx context.Context, invoker Invoker, invocation Invocation) *Result {
	if invocation.GetAttachmentWithDefaultValue("adaptive-service.enabled", "") != "1" {
		return invoker.Invoke(ctx, invocation)
	}
	l, err := limiterMapperSingleton.getMethodLimiter(invoker.GetURL(), invocation.MethodName())
	if err != nil {
		if !errors.Is(err, ErrLimiterNotFoundOnMapper) {
			return &Result{Err: err}
		}
		// limiter is not found on the mapper, just create a new limiter
		if l, err = limiterMapperSingleton.newAndSetMethodLimiter(invoker.GetURL(),
			invocation.MethodName(), HillClimbingLimiter); err != nil {
			return &Result{Err: err}
		}
	}
	updater, err := l.Acquire()
	if err != nil {
		return &Result{Err: err}
	}
	invocation.SetAttribute("adaptive-service.updater", updater)
	defer updater.DoUpdate()
	return invoker.Invoke(ctx, invocation)
}

// ---- a provider service behind the filter chain ----
type rpcInvocation struct {
	method string
	attrs  sync.Map
}

func (i *rpcInvocation) MethodName() string                                   { return i.method }
func (i *rpcInvocation) GetAttachmentWithDefaultValue(key, def string) string { return "1" }
func (i *rpcInvocation) SetAttribute(key string, value interface{})           { i.attrs.Store(key, value) }

type userProviderInvoker struct{ url *URL }

func (p *userProviderInvoker) GetURL() *URL {
	time.Sleep(20 * time.Millisecond) // widens the window between the lookup and the insert
	return p.url
}
func (p *userProviderInvoker) Invoke(ctx context.Context, inv Invocation) *Result { return &Result{} }

func main() {
	filter := &adaptiveServiceProviderFilter{}
	invoker := &userProviderInvoker{url: &URL{Path: "org.apache.dubbo.UserProvider"}}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ { // the first two GetUser requests arrive together
		wg.Add(1)
		go func() {
			defer wg.Done()
			filter.Invoke(context.Background(), invoker, &rpcInvocation{method: "GetUser"})
		}()
	}
	wg.Wait()
	res := filter.Invoke(context.Background(), invoker, &rpcInvocation{method: "GetUser"})
	fmt.Println("third request:", res.Err)
}
