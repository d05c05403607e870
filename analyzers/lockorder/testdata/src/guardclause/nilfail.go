package guardclause

import (
	"net/url"
	"sync"
)

// A function without an error result gives up through a nil: when the
// constructor it calls returns nil only where it fails, the early return
// on that nil is a failure, and the write lock after it is taken on every
// path where the function does its work (kubesphere's addCluster, called
// under the read lock on a cache miss).
type endpoint struct{ u *url.URL }

func newEndpoint(raw string) *endpoint {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	return &endpoint{u: u}
}

type Clients struct {
	sync.RWMutex
	byName map[string]*endpoint
}

func (c *Clients) add(name, raw string) *endpoint {
	ep := newEndpoint(raw)
	if ep == nil {
		return nil
	}
	c.Lock()
	defer c.Unlock()
	c.byName[name] = ep
	return ep
}

func (c *Clients) Get(name, raw string) *endpoint {
	c.RLock()
	defer c.RUnlock()
	if ep, ok := c.byName[name]; ok {
		return ep
	}
	return c.add(name, raw) // want `Lock of Clients.RWMutex by Clients.add \(at nilfail.go:33\) while read-locked since nilfail.go:40: a read lock cannot be upgraded, this deadlocks \[lock-upgrade\]`
}

// GetFixed lets the read lock go before it adds. Silent.
func (c *Clients) GetFixed(name, raw string) *endpoint {
	c.RLock()
	ep, ok := c.byName[name]
	c.RUnlock()
	if ok {
		return ep
	}
	return c.add(name, raw)
}

// A lookup's nil is a miss, not a failure: the lock after it depends on
// what the caller may already know. Silent.
func (c *Clients) find(name string) *endpoint {
	if name == "" {
		return nil
	}
	return &endpoint{}
}

func (c *Clients) touch(name string) *endpoint {
	ep := c.find(name)
	if ep == nil {
		return nil
	}
	c.Lock()
	defer c.Unlock()
	c.byName[name] = ep
	return ep
}

func (c *Clients) Refresh(name string) *endpoint {
	c.RLock()
	defer c.RUnlock()
	if ep, ok := c.byName[name]; ok {
		return ep
	}
	return c.touch(name)
}
