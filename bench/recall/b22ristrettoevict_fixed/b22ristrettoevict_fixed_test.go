// Project: dgraph-io/ristretto
// Bug: defaultPolicy.Add evicts victims while holding the policy mutex and
//      invokes the cache's OnEvict hook for each victim from inside that
//      critical section. A user OnEvict that calls back into the cache
//      (cache.Del -> policy.Del) re-locks the policy mutex on the processItems
//      goroutine, which then stalls every Set/Wait forever.
// Fix: Add only collects and returns the victims; processItems calls onEvict
//      after the policy lock has been released (as ristretto does today).

package b22ristrettoevict_fixed

import (
	"sync"
	"testing"
)

type itemFlag byte

const (
	itemNew itemFlag = iota
	itemDelete
)

type Item struct {
	flag  itemFlag
	Key   uint64
	Value interface{}
	Cost  int64
	wg    *sync.WaitGroup
}

type sampledLFU struct {
	keyCosts map[uint64]int64
	order    []uint64
	maxCost  int64
	used     int64
}

func (s *sampledLFU) roomLeft(cost int64) int64 { return s.maxCost - (s.used + cost) }

func (s *sampledLFU) add(key uint64, cost int64) {
	s.keyCosts[key] = cost
	s.order = append(s.order, key)
	s.used += cost
}

func (s *sampledLFU) del(key uint64) {
	cost, ok := s.keyCosts[key]
	if !ok {
		return
	}
	s.used -= cost
	delete(s.keyCosts, key)
	for i, k := range s.order {
		if k == key {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

type defaultPolicy struct {
	sync.Mutex
	evict   *sampledLFU
	onEvict func(*Item)
	metrics map[string]uint64
}

func newDefaultPolicy(maxCost int64) *defaultPolicy {
	return &defaultPolicy{
		evict:   &sampledLFU{keyCosts: map[uint64]int64{}, maxCost: maxCost},
		metrics: map[string]uint64{},
	}
}

func (p *defaultPolicy) Add(key uint64, cost int64) ([]*Item, bool) {
	p.Lock()
	defer p.Unlock()
	if cost > p.evict.maxCost {
		return nil, false
	}
	if _, ok := p.evict.keyCosts[key]; ok {
		return nil, false
	}
	var victims []*Item
	for p.evict.roomLeft(cost) < 0 && len(p.evict.order) > 0 {
		victim := p.evict.order[0]
		vcost := p.evict.keyCosts[victim]
		p.evict.del(victim)
		p.metrics["keysEvicted"]++
		victims = append(victims, &Item{Key: victim, Cost: vcost})
	}
	p.evict.add(key, cost)
	p.metrics["keysAdded"]++
	return victims, true
}

func (p *defaultPolicy) Del(key uint64) {
	p.Lock()
	defer p.Unlock()
	p.evict.del(key)
}

type Config struct {
	MaxCost int64
	OnEvict func(item *Item)
}

type Cache struct {
	storeMu sync.RWMutex
	store   map[uint64]interface{}
	policy  *defaultPolicy
	setBuf  chan *Item
	onEvict func(*Item)
}

func NewCache(cfg *Config) *Cache {
	c := &Cache{store: map[uint64]interface{}{}, policy: newDefaultPolicy(cfg.MaxCost),
		setBuf: make(chan *Item, 32), onEvict: cfg.OnEvict}
	c.policy.onEvict = func(i *Item) {
		c.storeMu.Lock()
		i.Value = c.store[i.Key]
		delete(c.store, i.Key)
		c.storeMu.Unlock()
		if c.onEvict != nil {
			c.onEvict(i)
		}
	}
	go c.processItems()
	return c
}

func (c *Cache) processItems() {
	for i := range c.setBuf {
		if i.wg != nil {
			i.wg.Done()
			continue
		}
		if i.flag != itemNew {
			continue
		}
		victims, added := c.policy.Add(i.Key, i.Cost)
		if added {
			c.storeMu.Lock()
			c.store[i.Key] = i.Value
			c.storeMu.Unlock()
		}
		for _, victim := range victims {
			c.policy.onEvict(victim)
		}
	}
}

func (c *Cache) Set(key uint64, value interface{}, cost int64) bool {
	c.setBuf <- &Item{flag: itemNew, Key: key, Value: value, Cost: cost}
	return true
}

func (c *Cache) Get(key uint64) (interface{}, bool) {
	c.storeMu.RLock()
	defer c.storeMu.RUnlock()
	v, ok := c.store[key]
	return v, ok
}

func (c *Cache) Del(key uint64) {
	c.storeMu.Lock()
	delete(c.store, key)
	c.storeMu.Unlock()
	c.policy.Del(key)
}

func (c *Cache) Wait() {
	wg := &sync.WaitGroup{}
	wg.Add(1)
	c.setBuf <- &Item{wg: wg}
	wg.Wait()
}

func TestProbe(t *testing.T) {
	var cache *Cache
	var evicted []uint64
	cache = NewCache(&Config{
		MaxCost: 2,
		OnEvict: func(item *Item) {
			evicted = append(evicted, item.Key)
			cache.Del(item.Key + 1000)
		},
	})
	for k := uint64(1); k <= 3; k++ {
		cache.Set(k, k*10, 1)
	}
	cache.Wait()
	if len(evicted) != 1 || evicted[0] != 1 {
		t.Fatalf("evicted = %v", evicted)
	}
	if _, ok := cache.Get(3); !ok {
		t.Fatal("key 3 missing")
	}
}
