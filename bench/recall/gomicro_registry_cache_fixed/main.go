// Project: go-micro (registry/cache/cache.go: cache.get / cache.getStatus / cache.run)
// Bug: cache.get held the cache RWMutex for reading while deciding whether stale entries
// may be served, and called the helper c.getStatus(), which RLocks the same mutex again.
// Meanwhile the watch loop (run -> setStatus/update) calls c.Lock(). With a writer queued
// between the two RLocks, the nested RLock waits for the writer and the writer waits for
// the outer RLock: every GetService call and the watcher hang.
// Upstream fix: read c.status directly while the read lock is already held (and release the
// lock before calling into the registry). Exact PR not recalled; shape modelled faithfully.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Node struct{ Id, Address string }

type Service struct {
	Name  string
	Nodes []*Node
}

type Registry interface {
	GetService(name string) ([]*Service, error)
}

type staticRegistry struct{ services map[string][]*Service }

func (r *staticRegistry) GetService(name string) ([]*Service, error) {
	return r.services[name], nil
}

type cache struct {
	Registry
	ttl time.Duration

	sync.RWMutex
	cache  map[string][]*Service
	ttls   map[string]time.Time
	status error
	exit   chan struct{}
}

func copyServices(in []*Service) []*Service {
	out := make([]*Service, 0, len(in))
	for _, s := range in {
		cp := *s
		cp.Nodes = append([]*Node(nil), s.Nodes...)
		out = append(out, &cp)
	}
	return out
}

func (c *cache) isValid(services []*Service, ttl time.Time) bool {
	return len(services) > 0 && !ttl.IsZero() && time.Since(ttl) <= 0
}

func (c *cache) getStatus() error {
	c.RLock()
	defer c.RUnlock()
	return c.status
}

func (c *cache) setStatus(err error) {
	c.Lock()
	c.status = err
	c.Unlock()
}

func (c *cache) set(service string, services []*Service) {
	c.Lock()
	defer c.Unlock()
	c.cache[service] = services
	c.ttls[service] = time.Now().Add(c.ttl)
}

func (c *cache) get(service string) ([]*Service, error) {
	c.RLock()
	defer c.RUnlock()
	cp := copyServices(c.cache[service])
	if c.isValid(cp, c.ttls[service]) {
		return cp, nil
	}
	// stale entry: serve it if the registry is currently unreachable
	if len(cp) > 0 {
		time.Sleep(5 * time.Millisecond) // sorting/filtering nodes
		// c.RLock is already held: read status directly.
		if err := c.status; err != nil {
			return cp, nil
		}
	}
	return nil, errors.New("cache miss")
}

func (c *cache) GetService(service string) ([]*Service, error) {
	if services, err := c.get(service); err == nil {
		return services, nil
	}
	services, err := c.Registry.GetService(service)
	if err != nil {
		return nil, err
	}
	c.set(service, services)
	return services, nil
}

// run is the background watch loop.
func (c *cache) run() {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.exit:
			return
		case <-t.C:
			c.setStatus(errors.New("registry watcher: connection refused"))
		}
	}
}

func main() {
	reg := &staticRegistry{services: map[string][]*Service{
		"go.micro.srv.greeter": {{Name: "go.micro.srv.greeter", Nodes: []*Node{{Id: "1", Address: "10.0.0.5:9090"}}}},
	}}
	c := &cache{Registry: reg, ttl: time.Millisecond, cache: map[string][]*Service{},
		ttls: map[string]time.Time{}, exit: make(chan struct{})}
	go c.run()
	for i := 0; i < 20; i++ {
		svcs, err := c.GetService("go.micro.srv.greeter")
		if err != nil {
			fmt.Println("lookup:", err)
			continue
		}
		fmt.Println("nodes:", len(svcs[0].Nodes))
		time.Sleep(2 * time.Millisecond)
	}
	close(c.exit)
}
