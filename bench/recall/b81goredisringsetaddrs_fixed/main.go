// Project: redis/go-redis (ring.go), v9.0.x, early 2023, when Ring.SetAddrs was added (approximate).
// Bug: ringSharding.SetAddrs took c.mu (write, with a defer) to swap in the new shard set and then called c.rebalance(), the same helper the heartbeat goroutine uses, which first reads c.shards under c.mu.RLock; the RLock blocks behind the writer held by SetAddrs itself, so the caller deadlocks (the fix split out rebalanceLocked, which requires c.mu held, and made Heartbeat lock around it).
package main

import (
	"fmt"
	"sort"
	"sync"
)

type Options struct{ Addr string }

type Client struct {
	opt    *Options
	closed bool
}

func NewClient(opt *Options) *Client { return &Client{opt: opt} }
func (c *Client) Close() error       { c.closed = true; return nil }
func (c *Client) String() string     { return "Redis<" + c.opt.Addr + ">" }

type ConsistentHash interface {
	Get(string) string
}

type rendezvousWrapper struct{ shards []string }

func (w rendezvousWrapper) Get(key string) string {
	if len(w.shards) == 0 {
		return ""
	}
	h := 0
	for _, b := range []byte(key) {
		h = h*31 + int(b)
	}
	if h < 0 {
		h = -h
	}
	return w.shards[h%len(w.shards)]
}

type RingOptions struct {
	Addrs             map[string]string
	NewClient         func(opt *Options) *Client
	NewConsistentHash func(shards []string) ConsistentHash
}

type ringShard struct {
	Client *Client
	down   int32
	addr   string
}

func newRingShard(opt *RingOptions, addr string) *ringShard {
	return &ringShard{Client: opt.NewClient(&Options{Addr: addr}), addr: addr}
}

func (shard *ringShard) IsUp() bool { return shard.down < 3 }

type ringShards struct {
	m    map[string]*ringShard
	list []*ringShard
}

type ringSharding struct {
	opt *RingOptions

	mu       sync.RWMutex
	shards   *ringShards
	closed   bool
	hash     ConsistentHash
	numShard int

	// ensures exclusive access to SetAddrs so there is no need
	// to hold mu for the duration of potentially long shard creation
	setAddrsMu sync.Mutex
}

func newRingSharding(opt *RingOptions) *ringSharding {
	c := &ringSharding{opt: opt}
	c.shards, _ = c.newRingShards(opt.Addrs, nil)
	c.mu.Lock()
	c.rebalanceLocked()
	c.mu.Unlock()
	return c
}

func (c *ringSharding) SetAddrs(addrs map[string]string) {
	c.setAddrsMu.Lock()
	defer c.setAddrsMu.Unlock()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	shards, cleanup := c.newRingShards(addrs, c.shards)
	c.shards = shards
	c.rebalanceLocked()
	cleanup()
}

func (c *ringSharding) newRingShards(addrs map[string]string, existing *ringShards) (*ringShards, func()) {
	shards := &ringShards{m: make(map[string]*ringShard, len(addrs))}
	var unused []*ringShard
	for name, addr := range addrs {
		if existing != nil {
			if sh, ok := existing.m[name]; ok && sh.addr == addr {
				shards.m[name] = sh
				continue
			}
		}
		shards.m[name] = newRingShard(c.opt, addr)
	}
	if existing != nil {
		for name, sh := range existing.m {
			if shards.m[name] != sh {
				unused = append(unused, sh)
			}
		}
	}
	for _, sh := range shards.m {
		shards.list = append(shards.list, sh)
	}
	return shards, func() {
		for _, sh := range unused {
			_ = sh.Client.Close()
		}
	}
}

// rebalanceLocked removes dead shards from the Ring.
// Requires c.mu locked.
func (c *ringSharding) rebalanceLocked() {
	shards := c.shards

	liveShards := make([]string, 0, len(shards.m))
	for name, shard := range shards.m {
		if shard.IsUp() {
			liveShards = append(liveShards, name)
		}
	}
	sort.Strings(liveShards)

	c.hash = c.opt.NewConsistentHash(liveShards)
	c.numShard = len(liveShards)
}

// Heartbeat monitors the state of each shard in the ring.
func (c *ringSharding) Heartbeat() {
	rebalance := false
	c.mu.RLock()
	for _, shard := range c.shards.list {
		if !shard.IsUp() {
			rebalance = true
		}
	}
	c.mu.RUnlock()
	if rebalance {
		c.mu.Lock()
		c.rebalanceLocked()
		c.mu.Unlock()
	}
}

func (c *ringSharding) GetByKey(key string) (*ringShard, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return nil, fmt.Errorf("redis: client is closed")
	}
	name := c.hash.Get(key)
	return c.shards.m[name], nil
}

type Ring struct{ sharding *ringSharding }

func NewRing(opt *RingOptions) *Ring {
	if opt.NewClient == nil {
		opt.NewClient = NewClient
	}
	if opt.NewConsistentHash == nil {
		opt.NewConsistentHash = func(shards []string) ConsistentHash { return rendezvousWrapper{shards} }
	}
	return &Ring{sharding: newRingSharding(opt)}
}

func (r *Ring) SetAddrs(addrs map[string]string) { r.sharding.SetAddrs(addrs) }

func main() {
	ring := NewRing(&RingOptions{Addrs: map[string]string{"shard1": ":7000", "shard2": ":7001"}})
	shard, _ := ring.sharding.GetByKey("user:42")
	fmt.Println("user:42 ->", shard.Client)
	ring.SetAddrs(map[string]string{"shard1": ":7000", "shard3": ":7002"})
	fmt.Println("resharded")
}
