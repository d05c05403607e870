// Project: apache/dubbo-go (registry/directory/directory.go + registry/zookeeper)
// Bug: the registry event loop holds zkRegistry.listenerLock while it calls
// NotifyListener.Notify, and RegistryDirectory.Notify takes dir.registerLock;
// RegistryDirectory.Destroy holds dir.registerLock while calling
// registry.UnSubscribe, which takes listenerLock. Opposite order -> deadlock.
// Fix: the registry snapshots the listeners under listenerLock and notifies them
// after releasing it.
package main

import (
	"fmt"
	"log"
	"sync"
	"time"
)

type URL struct {
	Protocol, Location, Path string
	Params                   map[string]string
}

func (u *URL) String() string { return fmt.Sprintf("%s://%s/%s", u.Protocol, u.Location, u.Path) }
func (u *URL) Key() string    { return u.Protocol + "://" + u.Location + "/" + u.Path }

type EventType int

const (
	EventTypeAdd EventType = iota
	EventTypeDel
)

type ServiceEvent struct {
	Action  EventType
	Service *URL
}

func (e ServiceEvent) String() string {
	return fmt.Sprintf("ServiceEvent{Action{%d}, Path{%s}}", e.Action, e.Service)
}

type NotifyListener interface {
	Notify(event *ServiceEvent)
}

type Registry interface {
	Subscribe(url *URL, listener NotifyListener) error
	UnSubscribe(url *URL, listener NotifyListener) error
	Destroy()
}

type zkRegistry struct {
	listenerLock sync.Mutex
	listeners    map[string][]NotifyListener
	events       chan *ServiceEvent
	done         chan struct{}
}

func NewZkRegistry() Registry {
	r := &zkRegistry{
		listeners: make(map[string][]NotifyListener),
		events:    make(chan *ServiceEvent, 16),
		done:      make(chan struct{}),
	}
	go r.handleEvents()
	return r
}

func (r *zkRegistry) handleEvents() {
	for {
		select {
		case <-r.done:
			return
		case ev := <-r.events:
			r.listenerLock.Lock()
			for _, l := range r.listeners[ev.Service.Path] {
				l.Notify(ev)
			}
			r.listenerLock.Unlock()
		}
	}
}

func (r *zkRegistry) Subscribe(url *URL, listener NotifyListener) error {
	r.listenerLock.Lock()
	defer r.listenerLock.Unlock()
	r.listeners[url.Path] = append(r.listeners[url.Path], listener)
	return nil
}

func (r *zkRegistry) UnSubscribe(url *URL, listener NotifyListener) error {
	r.listenerLock.Lock()
	defer r.listenerLock.Unlock()
	ls := r.listeners[url.Path]
	for i, l := range ls {
		if l == listener {
			r.listeners[url.Path] = append(ls[:i], ls[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("listener for %s not found", url)
}

func (r *zkRegistry) Destroy() { close(r.done) }

type Invoker struct {
	url       *URL
	available bool
}

func NewDubboInvoker(url *URL) *Invoker {
	time.Sleep(50 * time.Millisecond)
	return &Invoker{url: url, available: true}
}

func (i *Invoker) Destroy() { i.available = false }

type RegistryDirectory struct {
	registerLock     sync.Mutex
	consumerURL      *URL
	registry         Registry
	cacheInvokersMap map[string]*Invoker
	subscribed       bool
	destroyed        bool
}

func NewRegistryDirectory(url *URL, reg Registry) *RegistryDirectory {
	return &RegistryDirectory{consumerURL: url, registry: reg, cacheInvokersMap: make(map[string]*Invoker)}
}

func (dir *RegistryDirectory) Subscribe() error {
	dir.registerLock.Lock()
	defer dir.registerLock.Unlock()
	dir.subscribed = true
	return dir.registry.Subscribe(dir.consumerURL, dir)
}

func (dir *RegistryDirectory) Notify(event *ServiceEvent) {
	log.Printf("registry directory received %v", event)
	var inv *Invoker
	if event.Action == EventTypeAdd {
		inv = NewDubboInvoker(event.Service)
	}
	dir.registerLock.Lock()
	defer dir.registerLock.Unlock()
	if dir.destroyed {
		return
	}
	key := event.Service.Key()
	if old, ok := dir.cacheInvokersMap[key]; ok {
		old.Destroy()
		delete(dir.cacheInvokersMap, key)
	}
	if inv != nil {
		dir.cacheInvokersMap[key] = inv
	}
}

func (dir *RegistryDirectory) List() []*Invoker {
	dir.registerLock.Lock()
	defer dir.registerLock.Unlock()
	res := make([]*Invoker, 0, len(dir.cacheInvokersMap))
	for _, inv := range dir.cacheInvokersMap {
		res = append(res, inv)
	}
	return res
}

func (dir *RegistryDirectory) Destroy() {
	dir.registerLock.Lock()
	defer dir.registerLock.Unlock()
	dir.destroyed = true
	for key, inv := range dir.cacheInvokersMap {
		inv.Destroy()
		delete(dir.cacheInvokersMap, key)
	}
	if dir.subscribed {
		if err := dir.registry.UnSubscribe(dir.consumerURL, dir); err != nil {
			log.Printf("unsubscribe %v: %v", dir.consumerURL, err)
		}
	}
}

func main() {
	reg := NewZkRegistry()
	consumer := &URL{Protocol: "consumer", Location: "127.0.0.1", Path: "org.apache.dubbo.UserProvider"}
	dir := NewRegistryDirectory(consumer, reg)
	if err := dir.Subscribe(); err != nil {
		log.Fatal(err)
	}
	reg.(*zkRegistry).events <- &ServiceEvent{Action: EventTypeAdd, Service: &URL{Protocol: "dubbo", Location: "10.0.0.7:20000", Path: consumer.Path}}
	time.Sleep(10 * time.Millisecond)
	dir.Destroy()
	reg.Destroy()
	fmt.Println("directory destroyed, invokers left:", len(dir.List()))
}
