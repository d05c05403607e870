// Project: github.com/zeromicro/go-zero (core/discov)
// Bug: the Subscriber's container notified its listeners from addKv/removeKey while
// still holding c.lock; the documented usage is a listener that calls sub.Values(),
// which re-locks c.lock: cluster watch -> OnAdd -> addKv -> notifyChange -> listener
// -> Values -> getValues -> c.lock.Lock() self-deadlocks the etcd watch goroutine.
// Fix: OnAdd/OnDelete update the maps under the lock and call notifyChange, which
// copies the listener slice under the lock and runs the listeners without it.

package b20gozerosub_fixed

import (
	"sync"
	"sync/atomic"
	"testing"
)

type KV struct {
	Key string
	Val string
}

type UpdateListener interface {
	OnAdd(kv KV)
	OnDelete(kv KV)
}

type container struct {
	exclusive bool
	values    map[string][]string
	mapping   map[string]string
	snapshot  atomic.Value
	dirty     atomic.Bool
	listeners []func()
	lock      sync.Mutex
}

func newContainer(exclusive bool) *container {
	c := &container{exclusive: exclusive, values: make(map[string][]string), mapping: make(map[string]string)}
	c.dirty.Store(true)
	return c
}

func (c *container) OnAdd(kv KV) {
	c.addKv(kv.Key, kv.Val)
	c.notifyChange()
}

func (c *container) OnDelete(kv KV) {
	c.removeKey(kv.Key)
	c.notifyChange()
}

func (c *container) addKv(key, value string) ([]string, bool) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.dirty.Store(true)
	keys := c.values[value]
	previous := append([]string(nil), keys...)
	early := len(keys) > 0
	if c.exclusive && early {
		for _, each := range keys {
			c.doRemoveKey(each)
		}
	}
	c.values[value] = append(c.values[value], key)
	c.mapping[key] = value
	if early {
		return previous, true
	}
	return nil, false
}

func (c *container) addListener(listener func()) {
	c.lock.Lock()
	c.listeners = append(c.listeners, listener)
	c.lock.Unlock()
}

func (c *container) doRemoveKey(key string) {
	server, ok := c.mapping[key]
	if !ok {
		return
	}
	delete(c.mapping, key)
	keys := c.values[server]
	for i, k := range keys {
		if k == key {
			c.values[server] = append(keys[:i], keys[i+1:]...)
			break
		}
	}
	if len(c.values[server]) == 0 {
		delete(c.values, server)
	}
}

func (c *container) removeKey(key string) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.dirty.Store(true)
	c.doRemoveKey(key)
}

func (c *container) getValues() []string {
	if !c.dirty.Load() {
		return c.snapshot.Load().([]string)
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	var vals []string
	for each := range c.values {
		vals = append(vals, each)
	}
	c.snapshot.Store(vals)
	c.dirty.Store(false)
	return vals
}

func (c *container) notifyChange() {
	c.lock.Lock()
	listeners := append(([]func())(nil), c.listeners...)
	c.lock.Unlock()

	for _, listener := range listeners {

		listener()
	}
}

// Subscriber is used to subscribe the given key on an etcd cluster.
type Subscriber struct {
	endpoints []string
	exclusive bool
	items     *container
}

func NewSubscriber(endpoints []string, key string, reg *cluster) *Subscriber {
	sub := &Subscriber{endpoints: endpoints, items: newContainer(false)}
	reg.monitor(key, sub.items)
	return sub
}

func (s *Subscriber) AddListener(listener func()) { s.items.addListener(listener) }

func (s *Subscriber) Values() []string { return s.items.getValues() }

// cluster is the per-etcd-cluster watcher inside the Registry.
type cluster struct {
	lock      sync.Mutex
	listeners map[string][]UpdateListener
	events    chan KV
}

func (c *cluster) monitor(key string, l UpdateListener) {
	c.lock.Lock()
	c.listeners[key] = append(c.listeners[key], l)
	c.lock.Unlock()
}

func (c *cluster) watch(key string, done chan<- struct{}) {
	for kv := range c.events {
		c.lock.Lock()
		listeners := append([]UpdateListener(nil), c.listeners[key]...)
		c.lock.Unlock()
		for _, l := range listeners {
			l.OnAdd(kv)
		}
		done <- struct{}{}
	}
}

func TestSubscriberListenerCallsValues(t *testing.T) {
	reg := &cluster{listeners: make(map[string][]UpdateListener), events: make(chan KV, 1)}
	sub := NewSubscriber([]string{"localhost:2379"}, "user.rpc", reg)
	var endpoints atomic.Value
	sub.AddListener(func() { endpoints.Store(sub.Values()) })

	done := make(chan struct{})
	go reg.watch("user.rpc", done)
	reg.events <- KV{Key: "user.rpc/7587", Val: "10.0.0.5:8080"}
	<-done
	close(reg.events)
}
