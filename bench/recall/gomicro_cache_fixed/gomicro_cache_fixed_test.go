// FIXED TWIN. Project: go-micro (registry/cache).
// Bug (approximate, from memory): the registry cache embeds sync.RWMutex.
// cache.get() holds c.RLock() while it copies and validates the cached
// entry; isValid() consulted the registry health via c.getStatus(), which
// takes c.RLock() again. When the watch goroutine delivers an update
// (c.update -> c.Lock()) between the two RLocks, the nested RLock queues
// behind the writer and GetService() hangs forever, as does the watcher.
// Fixed by reading c.status directly in the locked path. Issue/PR number not
// remembered (approximate).
package gomicro_cache_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

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

type Watcher interface {
	Next() (*Result, error)
	Stop()
}

type Registry interface {
	GetService(name string) ([]*Service, error)
	Watch(service string) (Watcher, error)
}

var ErrWatcherStopped = errors.New("watcher stopped")

// ---- fake backing registry (e.g. mdns/etcd) ----

type fakeWatcher struct {
	results []*Result
	delay   time.Duration
}

func (w *fakeWatcher) Next() (*Result, error) {
	time.Sleep(w.delay)
	if len(w.results) == 0 {
		return nil, ErrWatcherStopped
	}
	r := w.results[0]
	w.results = w.results[1:]
	return r, nil
}
func (w *fakeWatcher) Stop() {}

type fakeRegistry struct {
	watcher *fakeWatcher
}

func (r *fakeRegistry) GetService(name string) ([]*Service, error) {
	return nil, errors.New("registry unavailable")
}
func (r *fakeRegistry) Watch(service string) (Watcher, error) { return r.watcher, nil }

// ---- util.Copy ----

func Copy(current []*Service) []*Service {
	services := make([]*Service, len(current))
	for i, service := range current {
		s := *service
		s.Nodes = append([]*Node(nil), service.Nodes...)
		services[i] = &s
	}
	time.Sleep(50 * time.Millisecond) // large service list; widens the window
	return services
}

// ---- registry/cache ----

type cache struct {
	Registry

	sync.RWMutex
	cache   map[string][]*Service
	ttls    map[string]time.Time
	watched map[string]bool
	status  error
	ttl     time.Duration
}

func newCache(r Registry) *cache {
	return &cache{
		Registry: r,
		cache:    make(map[string][]*Service),
		ttls:     make(map[string]time.Time),
		watched:  make(map[string]bool),
		ttl:      time.Minute,
	}
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

// isValid checks if the cached entry is still usable. Called with c.RLock held.
func (c *cache) isValid(services []*Service, ttl time.Time) bool {
	if len(services) == 0 {
		return false
	}
	if ttl.IsZero() {
		return false
	}
	if time.Since(ttl) > 0 {
		// expired: keep serving stale data while the registry is failing
		return c.status != nil // FIX: c.RLock is already held by the caller
	}
	return true
}

func (c *cache) set(service string, services []*Service) {
	c.cache[service] = services
	c.ttls[service] = time.Now().Add(c.ttl)
}

func (c *cache) get(service string) ([]*Service, error) {
	c.RLock()
	services := c.cache[service]
	ttl := c.ttls[service]
	cp := Copy(services)
	if c.isValid(cp, ttl) {
		c.RUnlock()
		return cp, nil
	}
	c.RUnlock()

	services, err := c.Registry.GetService(service)
	if err != nil {
		if len(cp) > 0 {
			c.setStatus(err)
			return cp, nil
		}
		return nil, err
	}
	c.Lock()
	c.set(service, Copy(services))
	c.Unlock()
	return services, nil
}

func (c *cache) update(res *Result) {
	if res == nil || res.Service == nil {
		return
	}
	c.Lock()
	defer c.Unlock()
	if _, ok := c.watched[res.Service.Name]; !ok {
		return
	}
	switch res.Action {
	case "create", "update":
		c.cache[res.Service.Name] = []*Service{res.Service}
		c.ttls[res.Service.Name] = time.Now().Add(c.ttl)
	case "delete":
		delete(c.cache, res.Service.Name)
		delete(c.ttls, res.Service.Name)
	}
}

// watch loops the watcher until it's stopped.
func (c *cache) watch(w Watcher) error {
	defer w.Stop()
	for {
		res, err := w.Next()
		if err != nil {
			return err
		}
		c.update(res)
	}
}

func (c *cache) GetService(service string) ([]*Service, error) {
	return c.get(service)
}

func TestGetServiceDuringWatchUpdate(t *testing.T) {
	svc := &Service{Name: "go.micro.srv.greeter", Version: "latest",
		Nodes: []*Node{{Id: "greeter-1", Address: "10.0.0.1:8080"}}}
	w := &fakeWatcher{delay: 20 * time.Millisecond,
		results: []*Result{{Action: "update", Service: svc}}}
	c := newCache(&fakeRegistry{watcher: w})
	// Stale entry, and the registry is currently failing.
	c.cache[svc.Name] = []*Service{svc}
	c.ttls[svc.Name] = time.Now().Add(-time.Second)
	c.watched[svc.Name] = true
	c.status = errors.New("registry unavailable")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, _ = c.GetService(svc.Name)
	}()
	go func() {
		defer wg.Done()
		wt, _ := c.Registry.Watch(svc.Name)
		_ = c.watch(wt)
	}()
	wg.Wait()
}
