// Command b72gomicrocachestring models go-micro's caching registry
// (registry/cache/cache.go): GetService fills the cache and starts a watcher
// goroutine per service, whose results cache.update folds in under the
// cache's embedded RWMutex.
//
// Modelled on go-micro, no specific upstream bug. Here the cache's String
// method reports how many services it holds and takes the read lock. When a
// delete event removes the last node of a service, cache.update logs it with
// the cache itself as a %v argument while holding the write lock; fmt calls
// cache.String, whose RLock blocks the watcher goroutine on the lock it
// holds. The client's next GetService then blocks on the read lock too.
//
// The fixed twin's String only uses fields that never change after the cache
// is built and takes no lock.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Level int

const DebugLevel Level = 0

type defaultLogger struct{ level Level }

func (l *defaultLogger) Logf(level Level, format string, v ...interface{}) {
	if level >= l.level {
		fmt.Println(fmt.Sprintf(format, v...))
	}
}

var logger = &defaultLogger{level: DebugLevel}

type Node struct {
	Id      string
	Address string
}

type Service struct {
	Name    string
	Version string
	Nodes   []*Node
}

type Result struct {
	Action  string
	Service *Service
}

type Watcher interface{ Next() (*Result, error) }

type Registry interface {
	GetService(name string) ([]*Service, error)
	Watch(service string) (Watcher, error)
	String() string
}

type mdnsWatcher struct{ results []*Result }

func (w *mdnsWatcher) Next() (*Result, error) {
	if len(w.results) == 0 {
		return nil, errors.New("watcher stopped")
	}
	time.Sleep(20 * time.Millisecond)
	r := w.results[0]
	w.results = w.results[1:]
	return r, nil
}

type mdnsRegistry struct {
	services map[string][]*Service
	events   []*Result
}

func (m *mdnsRegistry) GetService(name string) ([]*Service, error) { return m.services[name], nil }
func (m *mdnsRegistry) Watch(service string) (Watcher, error) {
	return &mdnsWatcher{results: m.events}, nil
}
func (m *mdnsRegistry) String() string { return "mdns" }

type cache struct {
	Registry
	sync.RWMutex
	cache   map[string][]*Service
	watched map[string]bool
}

func newCache(r Registry) *cache {
	return &cache{Registry: r, cache: map[string][]*Service{}, watched: map[string]bool{}}
}

func (c *cache) String() string {
	c.RLock()
	defer c.RUnlock()
	return fmt.Sprintf("cache(%s, %d services)", c.Registry.String(), len(c.cache))
}

func (c *cache) get(service string) ([]*Service, error) {
	c.RLock()
	services, ok := c.cache[service]
	watched := c.watched[service]
	c.RUnlock()
	if ok {
		return services, nil
	}
	services, err := c.Registry.GetService(service)
	if err != nil {
		return nil, err
	}
	c.Lock()
	c.cache[service] = services
	c.watched[service] = true
	c.Unlock()
	if !watched {
		go c.run(service)
	}
	return services, nil
}

func (c *cache) GetService(service string) ([]*Service, error) {
	return c.get(service)
}

func (c *cache) run(service string) {
	if w, err := c.Registry.Watch(service); err == nil {
		c.watch(w)
	}
}

func (c *cache) watch(w Watcher) {
	for {
		res, err := w.Next()
		if err != nil {
			return
		}
		c.update(res)
	}
}

func (c *cache) update(res *Result) {
	c.Lock()
	defer c.Unlock()
	if !c.watched[res.Service.Name] {
		return
	}
	services := c.cache[res.Service.Name]
	switch res.Action {
	case "create", "update":
		for _, s := range services {
			if s.Version == res.Service.Version {
				s.Nodes = append(s.Nodes, res.Service.Nodes...)
			}
		}
	case "delete":
		for _, s := range services {
			var keep []*Node
			for _, n := range s.Nodes {
				if n.Id != res.Service.Nodes[0].Id {
					keep = append(keep, n)
				}
			}
			s.Nodes = keep
			if len(keep) == 0 {
				logger.Logf(DebugLevel, "%v: service %s/%s has no nodes left", c, s.Name, s.Version)
			}
		}
	}
}

func main() {
	svc := func(id, addr string) *Service {
		return &Service{Name: "go.micro.srv.greeter", Version: "1.0.0", Nodes: []*Node{{Id: id, Address: addr}}}
	}
	reg := &mdnsRegistry{
		services: map[string][]*Service{"go.micro.srv.greeter": {svc("greeter-1", "10.0.3.1:9090")}},
		events: []*Result{
			{Action: "create", Service: svc("greeter-2", "10.0.3.2:9090")},
			{Action: "delete", Service: svc("greeter-1", "10.0.3.1:9090")},
			{Action: "delete", Service: svc("greeter-2", "10.0.3.2:9090")},
		},
	}
	c := newCache(reg)

	if _, err := c.GetService("go.micro.srv.greeter"); err != nil {
		fmt.Println(err)
	}
	time.Sleep(200 * time.Millisecond)

	services, err := c.GetService("go.micro.srv.greeter")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("greeter nodes:", len(services[0].Nodes))
}
