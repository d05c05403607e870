// Project: cockroachdb/cockroach (pkg/security/clientcert/cert_expiry_cache.go, pkg/util/metric/aggmetric), v24.3.x, March 2025 (issue #143662, fixed by PR #143663; code approximate).
// Bug: after #143384 the client certificate expiration cache gave every SQL user a functional TTL gauge child whose value function looks the user up in the cache under ClientCertExpirationCache.mu, while MaybeUpsert holds that mutex when it adds the user's children to the aggregate gauges (which locks the gauge's child set). A metrics scrape holds the child set lock of the TTL gauge while it evaluates each child, so a new client connection racing with a scrape deadlocks AB-BA on the cache mutex and the child set mutex; the fix computes the TTL from the captured expiry (ttlFunc) so scraping never takes the cache lock.
package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ---- pkg/util/metric/aggmetric ----
type childMetric interface {
	labelValues() []string
	Value() int64
}

type childSet struct {
	mu struct {
		sync.Mutex
		children map[string]childMetric
	}
}

func (cs *childSet) initWithChildren() { cs.mu.children = map[string]childMetric{} }

func (cs *childSet) add(c childMetric) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.mu.children[strings.Join(c.labelValues(), ",")] = c
}

func (cs *childSet) apply(f func(childMetric)) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	keys := make([]string, 0, len(cs.mu.children))
	for k := range cs.mu.children {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f(cs.mu.children[k])
	}
}

// AggGauge is a gauge whose value is aggregated from per-label children.
type AggGauge struct {
	name string
	childSet
}

func NewGauge(name string) *AggGauge {
	g := &AggGauge{name: name}
	g.initWithChildren()
	return g
}

// Each is what the Prometheus exporter calls on every scrape.
func (g *AggGauge) Each(f func(name string, c childMetric)) {
	g.apply(func(c childMetric) { f(g.name, c) })
}

type Gauge struct {
	parent *AggGauge
	labels []string
	value  atomic.Int64
}

func (g *AggGauge) AddChild(labelVals ...string) *Gauge {
	child := &Gauge{parent: g, labels: labelVals}
	g.add(child)
	return child
}

func (g *Gauge) labelValues() []string { return g.labels }
func (g *Gauge) Value() int64          { return g.value.Load() }
func (g *Gauge) Update(v int64)        { g.value.Store(v) }

type FunctionalGauge struct {
	parent *AggGauge
	labels []string
	fn     atomic.Pointer[func() int64]
}

func (g *AggGauge) AddFunctionalChild(fn func() int64, labelVals ...string) *FunctionalGauge {
	child := &FunctionalGauge{parent: g, labels: labelVals}
	child.fn.Store(&fn)
	g.add(child)
	return child
}

func (g *FunctionalGauge) labelValues() []string    { return g.labels }
func (g *FunctionalGauge) Value() int64             { return (*g.fn.Load())() }
func (g *FunctionalGauge) UpdateFn(fn func() int64) { g.fn.Store(&fn) }

// ---- pkg/util/timeutil ----
type TimeSource interface{ Now() time.Time }

// ---- pkg/security/clientcert ----
type clientCertExpirationMetrics struct {
	expiration *Gauge
	ttl        *FunctionalGauge
}

type ClientCertExpirationCache struct {
	mu struct {
		sync.Mutex
		cache map[string]*clientCertExpirationMetrics
	}
	timeSrc TimeSource
}

func NewClientCertExpirationCache(timeSrc TimeSource) *ClientCertExpirationCache {
	c := &ClientCertExpirationCache{timeSrc: timeSrc}
	c.mu.cache = map[string]*clientCertExpirationMetrics{}
	return c
}

func (c *ClientCertExpirationCache) timeNow() int64 { return c.timeSrc.Now().Unix() }

// MaybeUpsert is called on every authenticated client cert connection.
func (c *ClientCertExpirationCache) MaybeUpsert(
	ctx context.Context, key string, newExpiry int64, parentExpirationGauge, parentTTLGauge *AggGauge,
) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.mu.cache[key]
	if !ok {
		if newExpiry > c.timeNow() {
			expiration := parentExpirationGauge.AddChild(key)
			expiration.Update(newExpiry)
			// The TTL looks the entry up under c.mu at scrape time.
			ttl := parentTTLGauge.AddFunctionalChild(func() int64 {
				c.mu.Lock()
				defer c.mu.Unlock()
				e, ok := c.mu.cache[key]
				if !ok {
					return 0
				}
				if ttl := e.expiration.Value() - c.timeNow(); ttl > 0 {
					return ttl
				}
				return 0
			}, key)
			c.mu.cache[key] = &clientCertExpirationMetrics{expiration, ttl}
		}
	} else if newExpiry < m.expiration.Value() {
		m.expiration.Update(newExpiry)
	}
}

// handshakeClock is a timeutil.ManualTime whose first armed Now meets the scraper.
type handshakeClock struct {
	now   time.Time
	armed atomic.Bool
	mine  chan struct{}
	other chan struct{}
}

func (h *handshakeClock) Now() time.Time {
	if h.armed.CompareAndSwap(true, false) {
		h.mine <- struct{}{}
		<-h.other
	}
	return h.now
}

func main() {
	ctx := context.Background()
	upserting, scraping := make(chan struct{}, 1), make(chan struct{}, 1)
	clock := &handshakeClock{now: time.Unix(1_700_000_000, 0), mine: upserting, other: scraping}
	expGauge := NewGauge("security.certificate.expiration.client")
	ttlGauge := NewGauge("security.certificate.ttl.client")
	cache := NewClientCertExpirationCache(clock)
	cache.MaybeUpsert(ctx, "alice", clock.now.Unix()+3600, expGauge, ttlGauge)
	clock.armed.Store(true)
	done := make(chan string, 2)
	go func() { // pgwire: a new client cert connection for bob
		cache.MaybeUpsert(ctx, "bob", clock.now.Unix()+7200, expGauge, ttlGauge)
		done <- "upsert"
	}()
	go func() { // /_status/vars scrape
		var armed atomic.Bool
		armed.Store(true)
		for _, g := range []*AggGauge{ttlGauge, expGauge} {
			g.Each(func(name string, c childMetric) {
				if armed.CompareAndSwap(true, false) {
					scraping <- struct{}{}
					<-upserting
				}
				_ = fmt.Sprintf("%s{user=%q} %d", name, c.labelValues()[0], c.Value())
			})
		}
		done <- "scrape"
	}()
	fmt.Println(<-done, <-done, "done")
}
