// Project: knative/serving (pkg/autoscaler/metrics/collector.go, pkg/autoscaler/aggregation/bucketing.go), v0.10/v0.11 development, autumn 2019 (approximate).
// Bug: collection.stableAndPanicStats read-locked the collection's mux and, still holding it, called c.currentMetric() to read the stable and panic windows, which read-locks mux again. When the KPA reconciler's MetricCollector.CreateOrUpdate reached collection.updateMetric (mux.Lock) between the two read locks, the writer queued behind the first reader and the second RLock queued behind the writer, wedging the decider's Scale tick and the reconciler for that revision. The fix reads c.metric directly inside the already locked section.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrNoData = errors.New("no data available")

type NamespacedName struct{ Namespace, Name string }

type MetricSpec struct {
	StableWindow time.Duration
	PanicWindow  time.Duration
	ScrapeTarget string
}

type Metric struct {
	Namespace, Name string
	Spec            MetricSpec
}

type Stat struct {
	Time                      time.Time
	PodName                   string
	AverageConcurrentRequests float64
	RequestCount              float64
}

// ---- pkg/autoscaler/aggregation ----

// TimedFloat64Buckets keeps per-second buckets over a sliding window.
type TimedFloat64Buckets struct {
	bucketsMutex sync.RWMutex
	buckets      map[int64]float64
	granularity  time.Duration
	window       time.Duration
}

func NewTimedFloat64Buckets(window, granularity time.Duration) *TimedFloat64Buckets {
	return &TimedFloat64Buckets{buckets: map[int64]float64{}, granularity: granularity, window: window}
}

func (t *TimedFloat64Buckets) Record(now time.Time, value float64) {
	t.bucketsMutex.Lock()
	defer t.bucketsMutex.Unlock()
	t.buckets[now.Truncate(t.granularity).Unix()] += value
}

func (t *TimedFloat64Buckets) IsEmpty(now time.Time) bool {
	t.bucketsMutex.RLock()
	defer t.bucketsMutex.RUnlock()
	return len(t.buckets) == 0
}

func (t *TimedFloat64Buckets) WindowAverage(now time.Time, window time.Duration) float64 {
	t.bucketsMutex.RLock()
	defer t.bucketsMutex.RUnlock()
	var sum float64
	oldest := now.Add(-window).Unix()
	for ts, v := range t.buckets {
		if ts > oldest {
			sum += v
		}
	}
	return sum / window.Seconds()
}

func (t *TimedFloat64Buckets) ResizeWindow(w time.Duration) {
	t.bucketsMutex.Lock()
	defer t.bucketsMutex.Unlock()
	t.window = w
}

// ---- pkg/autoscaler/metrics ----

type collection struct {
	mux                sync.RWMutex
	metric             *Metric
	concurrencyBuckets *TimedFloat64Buckets
	rpsBuckets         *TimedFloat64Buckets
}

func newCollection(metric *Metric) *collection {
	return &collection{
		metric:             metric,
		concurrencyBuckets: NewTimedFloat64Buckets(metric.Spec.StableWindow, time.Second),
		rpsBuckets:         NewTimedFloat64Buckets(metric.Spec.StableWindow, time.Second),
	}
}

func (c *collection) currentMetric() *Metric {
	c.mux.RLock()
	defer c.mux.RUnlock()
	return c.metric
}

func (c *collection) updateMetric(metric *Metric) {
	c.mux.Lock()
	defer c.mux.Unlock()
	c.metric = metric
	c.concurrencyBuckets.ResizeWindow(metric.Spec.StableWindow)
	c.rpsBuckets.ResizeWindow(metric.Spec.StableWindow)
}

func (c *collection) record(stat Stat) {
	c.concurrencyBuckets.Record(stat.Time, stat.AverageConcurrentRequests)
	c.rpsBuckets.Record(stat.Time, stat.RequestCount)
}

func (c *collection) stableAndPanicConcurrency(now time.Time) (float64, float64, error) {
	return c.stableAndPanicStats(now, c.concurrencyBuckets)
}

func (c *collection) stableAndPanicStats(now time.Time, buckets *TimedFloat64Buckets) (float64, float64, error) {
	c.mux.RLock()
	defer c.mux.RUnlock()
	if buckets.IsEmpty(now) {
		return 0, 0, ErrNoData
	}
	time.Sleep(50 * time.Millisecond) // widen the window (scenario only)
	spec := c.currentMetric().Spec
	return buckets.WindowAverage(now, spec.StableWindow), buckets.WindowAverage(now, spec.PanicWindow), nil
}

// MetricCollector manages collection of metrics for many entities.
type MetricCollector struct {
	collectionsMutex sync.RWMutex
	collections      map[NamespacedName]*collection
}

func (c *MetricCollector) CreateOrUpdate(metric *Metric) error {
	key := NamespacedName{Namespace: metric.Namespace, Name: metric.Name}
	c.collectionsMutex.Lock()
	defer c.collectionsMutex.Unlock()
	if coll, exists := c.collections[key]; exists {
		coll.updateMetric(metric)
		return nil
	}
	c.collections[key] = newCollection(metric)
	return nil
}

func (c *MetricCollector) Record(key NamespacedName, stat Stat) {
	c.collectionsMutex.RLock()
	defer c.collectionsMutex.RUnlock()
	if coll, exists := c.collections[key]; exists {
		coll.record(stat)
	}
}

func (c *MetricCollector) StableAndPanicConcurrency(key NamespacedName, now time.Time) (float64, float64, error) {
	c.collectionsMutex.RLock()
	coll, exists := c.collections[key]
	c.collectionsMutex.RUnlock()
	if !exists {
		return 0, 0, ErrNoData
	}
	return coll.stableAndPanicConcurrency(now)
}

func main() {
	key := NamespacedName{Namespace: "default", Name: "hello-00001"}
	mc := &MetricCollector{collections: map[NamespacedName]*collection{}}
	spec := MetricSpec{StableWindow: 60 * time.Second, PanicWindow: 6 * time.Second, ScrapeTarget: "hello-00001-private"}
	if err := mc.CreateOrUpdate(&Metric{Namespace: key.Namespace, Name: key.Name, Spec: spec}); err != nil {
		panic(err)
	}
	mc.Record(key, Stat{Time: time.Now(), PodName: "hello-00001-deployment-abc", AverageConcurrentRequests: 3, RequestCount: 30})

	deciderDone := make(chan float64)
	go func() { // the autoscaler's decider ticker (Autoscaler.Scale)
		stable, _, _ := mc.StableAndPanicConcurrency(key, time.Now())
		deciderDone <- stable
	}()
	time.Sleep(10 * time.Millisecond)
	// The KPA reconciler re-syncs the Metric after the window annotation changed.
	spec.StableWindow = 90 * time.Second
	if err := mc.CreateOrUpdate(&Metric{Namespace: key.Namespace, Name: key.Name, Spec: spec}); err != nil {
		panic(err)
	}
	fmt.Printf("stable concurrency %.3f\n", <-deciderDone)
}
