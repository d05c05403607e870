// Project: github.com/patrickmn/go-cache
// Bug: DeleteExpired (run by the janitor) invoked the OnEvicted callback while still
// holding c.mu; an eviction callback that takes the application's lock deadlocks
// against application code that holds that lock and calls Set/Get (AB-BA through a
// callback registered with the OnEvicted setter).
// Fix: DeleteExpired collects the evicted key/value pairs under c.mu and calls
// onEvicted for them only after c.mu.Unlock().

package b20gocacheevict

import (
	"sync"
	"testing"
	"time"
)

const (
	NoExpiration      time.Duration = -1
	DefaultExpiration time.Duration = 0
)

type Item struct {
	Object     interface{}
	Expiration int64
}

func (item Item) Expired() bool {
	if item.Expiration == 0 {
		return false
	}
	return time.Now().UnixNano() > item.Expiration
}

type cache struct {
	defaultExpiration time.Duration
	items             map[string]Item
	mu                sync.RWMutex
	onEvicted         func(string, interface{})
	janitor           *janitor
}

type janitor struct {
	Interval time.Duration
	stop     chan bool
}

func (j *janitor) Run(c *cache) {
	ticker := time.NewTicker(j.Interval)
	for {
		select {
		case <-ticker.C:
			c.DeleteExpired()
		case <-j.stop:
			ticker.Stop()
			return
		}
	}
}

func New(defaultExpiration time.Duration) *cache {
	return &cache{defaultExpiration: defaultExpiration, items: make(map[string]Item)}
}

func (c *cache) Set(k string, x interface{}, d time.Duration) {
	var e int64
	if d == DefaultExpiration {
		d = c.defaultExpiration
	}
	if d > 0 {
		e = time.Now().Add(d).UnixNano()
	}
	c.mu.Lock()
	c.items[k] = Item{Object: x, Expiration: e}
	c.mu.Unlock()
}

func (c *cache) Get(k string) (interface{}, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	item, found := c.items[k]
	if !found || item.Expired() {
		return nil, false
	}
	return item.Object, true
}

func (c *cache) delete(k string) (interface{}, bool) {
	if c.onEvicted != nil {
		if v, found := c.items[k]; found {
			delete(c.items, k)
			return v.Object, true
		}
	}
	delete(c.items, k)
	return nil, false
}

// DeleteExpired deletes all expired items from the cache.
func (c *cache) DeleteExpired() {
	now := time.Now().UnixNano()
	c.mu.Lock()
	for k, v := range c.items {
		if v.Expiration > 0 && now > v.Expiration {
			ov, evicted := c.delete(k)
			if evicted {
				c.onEvicted(k, ov)
			}
		}
	}
	c.mu.Unlock()
}

// OnEvicted sets an (optional) function that is called with the key and value
// when an item is evicted from the cache.
func (c *cache) OnEvicted(f func(string, interface{})) {
	c.mu.Lock()
	c.onEvicted = f
	c.mu.Unlock()
}

func (c *cache) ItemCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.items)
}

// sessionIndex is application code: it keeps user -> sessions in sync with the cache.
type sessionIndex struct {
	mu     sync.Mutex
	byUser map[string]map[string]bool
	tokens *cache
}

func newSessionIndex() *sessionIndex {
	s := &sessionIndex{byUser: make(map[string]map[string]bool), tokens: New(time.Hour)}
	s.tokens.OnEvicted(func(token string, user interface{}) {
		s.mu.Lock()
		delete(s.byUser[user.(string)], token)
		s.mu.Unlock()
	})
	return s
}

func (s *sessionIndex) Login(user, token string, ttl time.Duration, hashing func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hashing()
	if s.byUser[user] == nil {
		s.byUser[user] = make(map[string]bool)
	}
	s.byUser[user][token] = true
	s.tokens.Set(token, user, ttl)
}

func TestJanitorEvictionVersusLogin(t *testing.T) {
	s := newSessionIndex()
	s.Login("alice", "t1", time.Millisecond, func() {})
	time.Sleep(5 * time.Millisecond) // t1 is now expired

	var wg sync.WaitGroup
	wg.Add(2)
	inLogin := make(chan struct{})
	go func() {
		defer wg.Done()
		s.Login("bob", "t2", time.Hour, func() {
			close(inLogin)
			time.Sleep(100 * time.Millisecond) // bcrypt of the password
		})
	}()
	<-inLogin   // Login holds s.mu
	go func() { // what janitor.Run does on every tick
		defer wg.Done()
		s.tokens.DeleteExpired()
	}()
	wg.Wait()
}
