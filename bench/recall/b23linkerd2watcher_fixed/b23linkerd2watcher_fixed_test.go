// Project: linkerd/linkerd2 (controller/api/destination)
// Bug: the endpoint translator unsubscribed from the EndpointsWatcher while
// holding its own mutex; at the same time the informer handler held the
// servicePublisher lock and delivered an update to the same listener via the
// EndpointUpdateListener interface, which needs the translator mutex.
// Fix: mark the translator stopped under its lock, release it, then
// Unsubscribe from the watcher without holding the translator lock.
package b23linkerd2watcher_fixed

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type ServiceID struct{ Namespace, Name string }

func (id ServiceID) String() string { return fmt.Sprintf("%s/%s", id.Namespace, id.Name) }

type AddressSet struct {
	Addresses map[string]string
	Labels    map[string]string
}

type EndpointUpdateListener interface {
	Add(set AddressSet)
	Remove(set AddressSet)
	NoEndpoints(exists bool)
}

type portPublisher struct {
	id        ServiceID
	port      uint32
	addresses AddressSet
	exists    bool
	listeners []EndpointUpdateListener
}

func (pp *portPublisher) updateEndpoints(set AddressSet) {
	pp.exists = true
	pp.addresses = set
	for _, l := range pp.listeners {
		l.Add(set)
	}
}

func (pp *portPublisher) unsubscribe(listener EndpointUpdateListener) {
	for i, l := range pp.listeners {
		if l == listener {
			n := len(pp.listeners)
			pp.listeners[i] = pp.listeners[n-1]
			pp.listeners = pp.listeners[:n-1]
			return
		}
	}
}

type servicePublisher struct {
	id    ServiceID
	ports map[uint32]*portPublisher
	sync.Mutex
}

func (sp *servicePublisher) subscribe(port uint32, l EndpointUpdateListener) {
	sp.Lock()
	defer sp.Unlock()
	pp, ok := sp.ports[port]
	if !ok {
		pp = &portPublisher{id: sp.id, port: port}
		sp.ports[port] = pp
	}
	pp.listeners = append(pp.listeners, l)
	if pp.exists {
		l.Add(pp.addresses)
	}
}

func (sp *servicePublisher) unsubscribe(port uint32, l EndpointUpdateListener) {
	sp.Lock()
	defer sp.Unlock()
	if pp, ok := sp.ports[port]; ok {
		pp.unsubscribe(l)
	}
}

func (sp *servicePublisher) updateEndpoints(set AddressSet) {
	sp.Lock()
	defer sp.Unlock()
	for _, pp := range sp.ports {
		pp.updateEndpoints(set)
	}
}

type EndpointsWatcher struct {
	publishers map[ServiceID]*servicePublisher
	sync.RWMutex
}

func (ew *EndpointsWatcher) getOrNewServicePublisher(id ServiceID) *servicePublisher {
	ew.Lock()
	defer ew.Unlock()
	sp, ok := ew.publishers[id]
	if !ok {
		sp = &servicePublisher{id: id, ports: map[uint32]*portPublisher{}}
		ew.publishers[id] = sp
	}
	return sp
}

func (ew *EndpointsWatcher) Subscribe(id ServiceID, port uint32, l EndpointUpdateListener) {
	ew.getOrNewServicePublisher(id).subscribe(port, l)
}

func (ew *EndpointsWatcher) Unsubscribe(id ServiceID, port uint32, l EndpointUpdateListener) {
	ew.RLock()
	sp, ok := ew.publishers[id]
	ew.RUnlock()
	if ok {
		sp.unsubscribe(port, l)
	}
}

type endpointTranslator struct {
	mu        sync.Mutex
	available map[string]string
	stopped   bool
	watcher   *EndpointsWatcher
	service   ServiceID
	port      uint32
	updates   chan string
}

func (et *endpointTranslator) Add(set AddressSet) {
	et.mu.Lock()
	defer et.mu.Unlock()
	for k, v := range set.Addresses {
		et.available[k] = v
	}
}

func (et *endpointTranslator) Remove(set AddressSet) {
	et.mu.Lock()
	defer et.mu.Unlock()
	for k := range set.Addresses {
		delete(et.available, k)
	}
}

func (et *endpointTranslator) NoEndpoints(exists bool) {
	et.mu.Lock()
	defer et.mu.Unlock()
	et.available = map[string]string{}
}

func (et *endpointTranslator) Stop(beforeUnsubscribe func()) {
	et.mu.Lock()
	et.stopped = true
	beforeUnsubscribe()
	et.mu.Unlock()
	et.watcher.Unsubscribe(et.service, et.port, et)
}

func TestProbe(t *testing.T) {
	ew := &EndpointsWatcher{publishers: map[ServiceID]*servicePublisher{}}
	id := ServiceID{Namespace: "emojivoto", Name: "web-svc"}
	et := &endpointTranslator{available: map[string]string{}, watcher: ew, service: id, port: 8080}
	ew.Subscribe(id, 8080, et)

	stopping := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		et.Stop(func() {
			close(stopping)
			time.Sleep(50 * time.Millisecond)
		})
	}()
	go func() {
		defer wg.Done()
		<-stopping
		sp := ew.getOrNewServicePublisher(id)
		sp.updateEndpoints(AddressSet{Addresses: map[string]string{"10.0.0.7:8080": "web-7"}})
	}()
	wg.Wait()
}
