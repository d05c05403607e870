// Project: go-kit/kit (sd, sd/internal/instance)
// Bug: instance.Cache.Update holds c.mtx while broadcasting the new event to
//      every registered (unbuffered) subscriber channel. DefaultEndpointer.Close
//      first stopped its receive goroutine and only afterwards called
//      instancer.Deregister(ch), which needs c.mtx. A broadcast already blocked
//      on the endpointer's channel can then never complete, and Deregister
//      never gets the mutex.
// Fix: Close deregisters the channel first (the receive loop keeps draining it
//      until then) and only then closes the channel to stop the receive loop.

package b22gokitsd

import (
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"
)

type Event struct {
	Instances []string
	Err       error
}

type Instancer interface {
	Register(chan<- Event)
	Deregister(chan<- Event)
	Stop()
}

type registry map[chan<- Event]struct{}

func (r registry) broadcast(event Event) {
	for c := range r {
		eventCopy := Event{Instances: append([]string(nil), event.Instances...), Err: event.Err}
		c <- eventCopy
	}
}

type Cache struct {
	mtx   sync.RWMutex
	state Event
	reg   registry
}

func NewCache() *Cache { return &Cache{reg: registry{}} }

func (c *Cache) Update(event Event) {
	c.mtx.Lock()
	defer c.mtx.Unlock()
	sort.Strings(event.Instances)
	if reflect.DeepEqual(c.state, event) {
		return
	}
	c.state = event
	c.reg.broadcast(event)
}

func (c *Cache) State() Event {
	c.mtx.RLock()
	defer c.mtx.RUnlock()
	return Event{Instances: append([]string(nil), c.state.Instances...), Err: c.state.Err}
}

func (c *Cache) Stop() {}

func (c *Cache) Register(ch chan<- Event) {
	c.mtx.Lock()
	defer c.mtx.Unlock()
	c.reg[ch] = struct{}{}
	ch <- Event{Instances: append([]string(nil), c.state.Instances...), Err: c.state.Err}
}

func (c *Cache) Deregister(ch chan<- Event) {
	c.mtx.Lock()
	defer c.mtx.Unlock()
	delete(c.reg, ch)
}

type Endpoint func(req interface{}) (interface{}, error)

type Factory func(instance string) (Endpoint, error)

type endpointCache struct {
	mtx       sync.RWMutex
	factory   Factory
	endpoints []Endpoint
}

func (c *endpointCache) Update(event Event) {
	var eps []Endpoint
	for _, inst := range event.Instances {
		ep, err := c.factory(inst)
		if err == nil {
			eps = append(eps, ep)
		}
	}
	c.mtx.Lock()
	c.endpoints = eps
	c.mtx.Unlock()
}

func (c *endpointCache) Endpoints() []Endpoint {
	c.mtx.RLock()
	defer c.mtx.RUnlock()
	return c.endpoints
}

type DefaultEndpointer struct {
	cache     *endpointCache
	instancer Instancer
	ch        chan Event
	quitc     chan struct{}
	wg        sync.WaitGroup
}

func NewEndpointer(src Instancer, f Factory) *DefaultEndpointer {
	se := &DefaultEndpointer{cache: &endpointCache{factory: f}, instancer: src,
		ch: make(chan Event), quitc: make(chan struct{})}
	se.wg.Add(1)
	go se.receive()
	src.Register(se.ch)
	return se
}

func (de *DefaultEndpointer) receive() {
	defer de.wg.Done()
	for {
		select {
		case <-de.quitc:
			return
		default:
		}
		select {
		case event := <-de.ch:
			de.cache.Update(event)
		case <-de.quitc:
			return
		}
	}
}

func (de *DefaultEndpointer) Endpoints() ([]Endpoint, error) { return de.cache.Endpoints(), nil }

func (de *DefaultEndpointer) Close() {
	close(de.quitc)
	de.wg.Wait()
	de.instancer.Deregister(de.ch)
}

func TestProbe(t *testing.T) {
	instancer := NewCache()
	factory := func(instance string) (Endpoint, error) {
		time.Sleep(100 * time.Millisecond)
		return func(req interface{}) (interface{}, error) { return instance, nil }, nil
	}
	e := NewEndpointer(instancer, factory)

	instancer.Update(Event{Instances: []string{"10.0.0.1:8080"}})
	go func() {
		time.Sleep(20 * time.Millisecond)
		instancer.Update(Event{Instances: []string{"10.0.0.1:8080", "10.0.0.2:8080"}})
	}()
	time.Sleep(50 * time.Millisecond)
	e.Close()
	if _, err := e.Endpoints(); err != nil {
		t.Fatal(err)
	}
}
