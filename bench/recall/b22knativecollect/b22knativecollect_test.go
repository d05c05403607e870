// Project: knative/serving (pkg/autoscaler/metrics/collector.go)
// Bug: collection.close() took c.mux (to drop the scraper) and then waited on
//      c.grp for the scraping goroutine to exit. A scrape that was in flight
//      finishes by calling c.updateLastError()/c.record(), both of which need
//      c.mux, so the scraper can never call grp.Done() and
//      MetricCollector.Delete hangs forever.
// Fix: close() only closes stopCh and waits on the WaitGroup without holding
//      the collection mutex.

package b22knativecollect

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type NamespacedName struct{ Namespace, Name string }

type Stat struct {
	PodName                   string
	AverageConcurrentRequests float64
	RequestCount              float64
}

var emptyStat = Stat{}

type StatsScraper interface {
	Scrape(window time.Duration) (Stat, error)
}

type Metric struct {
	Key          NamespacedName
	StableWindow time.Duration
}

type collection struct {
	mux                sync.RWMutex
	metric             *Metric
	concurrencyBuckets map[int64]float64
	rpsBuckets         map[int64]float64
	scraper            StatsScraper
	lastErr            error
	grp                sync.WaitGroup
	stopCh             chan struct{}
}

func (c *collection) getScraper() StatsScraper {
	c.mux.RLock()
	defer c.mux.RUnlock()
	return c.scraper
}

func (c *collection) currentMetric() *Metric {
	c.mux.RLock()
	defer c.mux.RUnlock()
	return c.metric
}

func (c *collection) updateLastError(err error) bool {
	c.mux.Lock()
	defer c.mux.Unlock()
	if errors.Is(err, c.lastErr) {
		return false
	}
	c.lastErr = err
	return true
}

func (c *collection) record(now time.Time, stat Stat) {
	c.mux.Lock()
	defer c.mux.Unlock()
	sec := now.Unix()
	c.concurrencyBuckets[sec] += stat.AverageConcurrentRequests
	c.rpsBuckets[sec] += stat.RequestCount
}

func newCollection(metric *Metric, scraper StatsScraper, tick time.Duration, callback func(NamespacedName)) *collection {
	c := &collection{metric: metric, scraper: scraper, stopCh: make(chan struct{}),
		concurrencyBuckets: map[int64]float64{}, rpsBuckets: map[int64]float64{}}
	key := metric.Key
	c.grp.Add(1)
	go func() {
		defer c.grp.Done()
		ticker := time.NewTicker(tick)
		defer ticker.Stop()
		for {
			select {
			case <-c.stopCh:
				return
			case <-ticker.C:
				scraper := c.getScraper()
				if scraper == nil {
					continue
				}
				stat, err := scraper.Scrape(c.currentMetric().StableWindow)
				if c.updateLastError(err) {
					callback(key)
				}
				if stat != emptyStat {
					c.record(time.Now(), stat)
				}
			}
		}
	}()
	return c
}

func (c *collection) close() {
	c.mux.Lock()
	defer c.mux.Unlock()
	c.scraper = nil
	close(c.stopCh)
	c.grp.Wait()
}

type MetricCollector struct {
	collectionsMutex sync.RWMutex
	collections      map[NamespacedName]*collection
	watcherMutex     sync.RWMutex
	watcher          func(NamespacedName)
}

func (c *MetricCollector) CreateOrUpdate(metric *Metric, scraper StatsScraper) {
	c.collectionsMutex.Lock()
	defer c.collectionsMutex.Unlock()
	if _, ok := c.collections[metric.Key]; !ok {
		c.collections[metric.Key] = newCollection(metric, scraper, 10*time.Millisecond, c.Inform)
	}
}

func (c *MetricCollector) Delete(namespace, name string) {
	c.collectionsMutex.Lock()
	defer c.collectionsMutex.Unlock()
	key := NamespacedName{Namespace: namespace, Name: name}
	if coll, ok := c.collections[key]; ok {
		coll.close()
		delete(c.collections, key)
	}
}

func (c *MetricCollector) Watch(fn func(NamespacedName)) {
	c.watcherMutex.Lock()
	defer c.watcherMutex.Unlock()
	c.watcher = fn
}

func (c *MetricCollector) Inform(key NamespacedName) {
	c.watcherMutex.RLock()
	defer c.watcherMutex.RUnlock()
	if c.watcher != nil {
		c.watcher(key)
	}
}

type slowScraper struct{ started chan struct{} }

func (s *slowScraper) Scrape(window time.Duration) (Stat, error) {
	select {
	case s.started <- struct{}{}:
	default:
	}
	time.Sleep(50 * time.Millisecond)
	return Stat{PodName: "activator", AverageConcurrentRequests: 3, RequestCount: 12}, nil
}

func TestProbe(t *testing.T) {
	mc := &MetricCollector{collections: map[NamespacedName]*collection{}}
	mc.Watch(func(key NamespacedName) { t.Logf("metric %v changed", key) })
	scraper := &slowScraper{started: make(chan struct{})}
	key := NamespacedName{Namespace: "default", Name: "hello-00001"}
	mc.CreateOrUpdate(&Metric{Key: key, StableWindow: time.Minute}, scraper)

	<-scraper.started
	mc.Delete(key.Namespace, key.Name)
	if len(mc.collections) != 0 {
		t.Fatalf("collections not cleaned up: %d", len(mc.collections))
	}
}
