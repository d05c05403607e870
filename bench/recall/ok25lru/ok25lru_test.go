// Pattern: LRU cache with an onEvict constructor argument. Evicting events are
// delivered while c.mu is held, Evicted events after the unlock; the handler
// is a method of a spill store holding a pointer back to the cache, which uses
// containsLocked for Evicting and the locking Len for Evicted. GetOrLoad
// releases c.mu on every return path (hit, load error, lost race, success);
// tryLockOpen is a TryLock-style helper holding c.mu only when it reports true.
package ok25lru

import (
	"container/list"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

var ErrClosed = errors.New("cache closed")

type EventKind int

const (
	Evicting EventKind = iota
	Evicted
)

type Event struct {
	Kind  EventKind
	Key   string
	Value int
}

type entry struct {
	key string
	val int
}

type Cache struct {
	mu      sync.Mutex
	cap     int
	onEvict func(Event)
	ll      *list.List
	items   map[string]*list.Element
	closed  bool
}

func New(capacity int, onEvict func(Event)) *Cache {
	return &Cache{cap: capacity, onEvict: onEvict, ll: list.New(), items: make(map[string]*list.Element)}
}

// containsLocked requires c.mu.
func (c *Cache) containsLocked(key string) bool { _, ok := c.items[key]; return ok }

func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// tryLockOpen takes c.mu without blocking. It reports true only when it
// acquired c.mu and the cache is open; the caller must then unlock c.mu.
func (c *Cache) tryLockOpen() bool {
	if !c.mu.TryLock() {
		return false
	}
	if c.closed {
		c.mu.Unlock()
		return false
	}
	return true
}

// evictLocked trims the list to max entries and returns the entries still to
// be announced. Requires c.mu.
func (c *Cache) evictLocked(max int) []entry {
	var out []entry
	for c.ll.Len() > max {
		e := c.ll.Back().Value.(*entry)
		if c.onEvict != nil {
			c.onEvict(Event{Kind: Evicting, Key: e.key, Value: e.val})
			out = append(out, *e)
		}
		c.ll.Remove(c.ll.Back())
		delete(c.items, e.key)
	}
	return out
}

func (c *Cache) announce(gone []entry) {
	for _, e := range gone {
		c.onEvict(Event{Kind: Evicted, Key: e.key, Value: e.val})
	}
}

func (c *Cache) GetOrLoad(key string, load func(string) (int, error)) (int, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, ErrClosed
	}
	if el, ok := c.items[key]; ok {
		c.ll.MoveToFront(el)
		v := el.Value.(*entry).val
		c.mu.Unlock()
		return v, nil
	}
	c.mu.Unlock()

	v, err := load(key)
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		v = el.Value.(*entry).val
		c.mu.Unlock()
		return v, nil
	}
	c.items[key] = c.ll.PushFront(&entry{key: key, val: v})
	gone := c.evictLocked(c.cap)
	c.mu.Unlock()
	c.announce(gone)
	return v, nil
}

// TryTrim shrinks the cache to max entries unless the lock is contended.
func (c *Cache) TryTrim(max int) bool {
	if !c.tryLockOpen() {
		return false
	}
	gone := c.evictLocked(max)
	c.mu.Unlock()
	c.announce(gone)
	return true
}

func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
}

type spill struct {
	c            *Cache
	pending, bad atomic.Int64
	mu           sync.Mutex
	store        map[string]int
}

func (s *spill) onEvict(ev Event) {
	switch ev.Kind {
	case Evicting:
		if !s.c.containsLocked(ev.Key) {
			s.bad.Add(1)
		}
		s.pending.Add(1)
	case Evicted:
		s.mu.Lock()
		s.store[ev.Key] = ev.Value
		s.mu.Unlock()
		_ = s.c.Len()
		s.pending.Add(-1)
	}
}

func (s *spill) load(key string) (int, error) {
	s.mu.Lock()
	v, ok := s.store[key]
	delete(s.store, key)
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	return strconv.Atoi(strings.TrimPrefix(key, "k"))
}

func TestLRUEvictionSpill(t *testing.T) {
	sp := &spill{store: map[string]int{}}
	cache := New(16, sp.onEvict)
	sp.c = cache

	var stop atomic.Bool
	janitor := make(chan struct{})
	go func() {
		defer close(janitor)
		for !stop.Load() {
			cache.TryTrim(8)
		}
	}()

	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			for i := 0; i < 400; i++ {
				n := int(seed*37+int64(i*i)) % 64
				if v, err := cache.GetOrLoad(fmt.Sprintf("k%d", n), sp.load); err != nil || v != n {
					t.Errorf("k%d = %d, %v", n, v, err)
				}
			}
			if _, err := cache.GetOrLoad("bogus", sp.load); err == nil {
				t.Error("expected load error")
			}
		}(int64(w))
	}
	wg.Wait()
	stop.Store(true)
	<-janitor

	if cache.Len() > 16 || sp.bad.Load() != 0 || sp.pending.Load() != 0 {
		t.Fatalf("len=%d bad=%d pending=%d", cache.Len(), sp.bad.Load(), sp.pending.Load())
	}
	cache.Close()
	if _, err := cache.GetOrLoad("k1", sp.load); !errors.Is(err, ErrClosed) {
		t.Fatalf("GetOrLoad after Close: %v", err)
	}
}
