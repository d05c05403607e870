// Pattern: an LRU cache whose eviction hook is guarded by a nil check and is
// invoked only after the cache mutex has been released; read paths take the
// RWMutex read lock and call non-locking helpers that require mu to be held;
// a package logger is called under the lock with plain fields and %d verbs.
package main

import (
	"container/list"
	"fmt"
	"os"
	"sync"
)

type Logger interface {
	Debugf(format string, args ...any)
}

type stdLogger struct {
	mu  sync.Mutex
	out []string
}

func (l *stdLogger) Debugf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.out = append(l.out, msg)
	l.mu.Unlock()
}

type entry struct {
	key   string
	value int
}

type Cache struct {
	mu      sync.RWMutex
	cap     int
	ll      *list.List
	items   map[string]*list.Element
	log     Logger
	onEvict func(key string, value int)
}

func NewCache(capacity int, log Logger, onEvict func(string, int)) *Cache {
	return &Cache{
		cap:     capacity,
		ll:      list.New(),
		items:   make(map[string]*list.Element),
		log:     log,
		onEvict: onEvict,
	}
}

// lookup must hold mu (read or write).
func (c *Cache) lookup(key string) (*entry, bool) {
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	return el.Value.(*entry), true
}

// sizeLocked must hold mu.
func (c *Cache) sizeLocked() int { return c.ll.Len() }

func (c *Cache) Peek(key string) (int, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.lookup(key)
	if !ok {
		return 0, false
	}
	return e.value, true
}

func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sizeLocked()
}

func (c *Cache) Put(key string, value int) {
	var evicted []*entry
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		el.Value.(*entry).value = value
		c.ll.MoveToFront(el)
	} else {
		c.items[key] = c.ll.PushFront(&entry{key: key, value: value})
	}
	for c.ll.Len() > c.cap {
		back := c.ll.Back()
		e := back.Value.(*entry)
		c.ll.Remove(back)
		delete(c.items, e.key)
		evicted = append(evicted, e)
		c.log.Debugf("evict key=%s size=%d cap=%d", e.key, c.ll.Len(), c.cap)
	}
	hook := c.onEvict
	c.mu.Unlock()

	if hook != nil {
		for _, e := range evicted {
			hook(e.key, e.value)
		}
	}
}

func main() {
	log := &stdLogger{}
	var cache *Cache
	var evictMu sync.Mutex
	evictions := 0
	cache = NewCache(8, log, func(key string, value int) {
		// Runs after Put released the lock; re-reading the cache is fine.
		_ = cache.Len()
		_, _ = cache.Peek(key)
		evictMu.Lock()
		evictions++
		evictMu.Unlock()
	})

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := fmt.Sprintf("k%d", (w*37+i)%40)
				cache.Put(k, i)
				cache.Peek(k)
			}
		}(w)
	}
	wg.Wait()

	if n := cache.Len(); n > 8 {
		fmt.Println("cache over capacity:", n)
		os.Exit(1)
	}
	evictMu.Lock()
	fmt.Printf("len=%d evictions=%d logs=%d\n", cache.Len(), evictions, len(log.out))
	evictMu.Unlock()
}
