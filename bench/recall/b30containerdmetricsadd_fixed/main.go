// Project: containerd/containerd v1.6 (metrics/cgroups/v1/metrics.go Collector.Add/Collect,
// metrics/cgroups/v1/cgroups.go cgroupsMonitor.Monitor, services/tasks/local.go Create;
// vendored github.com/docker/go-metrics namespace.go, prometheus/client_golang registry)
// Issue: containerd/containerd#6772 "containers stuck terminating / creating - many `runc init`
// processes"; fixed by containerd/containerd#6788 "metrics/cgroups: fix deadlock issue in
// Add during Collect" (backport #6801). Introduced in 1.6 by #5744 (per-task runtime labels).
//
// Bug: lock-order inversion between the cgroups metrics Collector's RWMutex (v1.Collector, named
// CgroupsCollector here) and the go-metrics Namespace mutex. The Collector is registered as a
// prometheus.Collector in the "container" Namespace (ns.Add(c)); a /v1/metrics scrape runs
// Registry.Gather, whose worker calls Namespace.Collect, which holds ns.mu (line 86) while calling every member's Collect -
// i.e. Collector.Collect, which read-locks c.mu (line 211). Concurrently the tasks service
// creates a task and calls monitor.Monitor(task, labels) -> Collector.Add, which write-locks
// c.mu (line 252) and, because labels is non-nil, derives a child namespace with
// c.ns.WithConstLabels(labels), which locks ns.mu (line 69). Scrape: ns.mu -> c.mu; task
// create: c.mu -> ns.mu. Both block forever, so no task can be started (runc init piles up)
// and every later scrape hangs.
//
// Fix (#6788): Add only read-locks c.mu for the idempotency check, calls WithConstLabels with
// no Collector lock held, and takes c.mu.Lock just to insert the entry.
// FIXED twin: Collector.Add calls WithConstLabels without holding c.mu (#6788).
package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// ---------------------------------------------------------------------------
// github.com/prometheus/client_golang/prometheus (trimmed)
// ---------------------------------------------------------------------------

type Metric interface {
	Desc() string
}

// Collector is the interface implemented by anything that can be used by
// Prometheus to collect metrics.
type Collector interface {
	Collect(ch chan<- Metric)
}

// ---------------------------------------------------------------------------
// github.com/docker/go-metrics (namespace.go, register.go)
// ---------------------------------------------------------------------------

type Labels map[string]string

type Namespace struct {
	name      string
	subsystem string
	labels    Labels
	mu        sync.Mutex
	metrics   []Collector
}

func NewNamespace(name, subsystem string, labels Labels) *Namespace {
	if labels == nil {
		labels = make(map[string]string)
	}
	return &Namespace{name: name, subsystem: subsystem, labels: labels}
}

// WithConstLabels returns a namespace with the provided set of labels merged
// with the existing constant labels on the namespace.
func (n *Namespace) WithConstLabels(labels Labels) *Namespace {
	n.mu.Lock()
	ns := &Namespace{
		name:      n.name,
		subsystem: n.subsystem,
		labels:    mergeLabels(n.labels, labels),
	}
	n.mu.Unlock()
	return ns
}

func (n *Namespace) Add(collector Collector) {
	n.mu.Lock()
	n.metrics = append(n.metrics, collector)
	n.mu.Unlock()
}

func (n *Namespace) Collect(ch chan<- Metric) {
	n.mu.Lock()
	defer n.mu.Unlock()

	for _, metric := range n.metrics {
		metric.Collect(ch)
	}
}

func mergeLabels(lbs ...Labels) Labels {
	all := make(Labels)
	for _, lb := range lbs {
		for k, v := range lb {
			all[k] = v
		}
	}
	return all
}

// Registry stands in for prometheus.DefaultRegisterer/DefaultGatherer.
type Registry struct {
	mtx        sync.RWMutex
	collectors []Collector
}

var defaultRegistry = &Registry{}

// Register adds all the metrics in the provided namespace to the global
// metrics registry
func Register(n *Namespace) {
	defaultRegistry.mtx.Lock()
	defaultRegistry.collectors = append(defaultRegistry.collectors, n)
	defaultRegistry.mtx.Unlock()
}

// Gather calls the Collect method of the registered Collectors from collect
// worker goroutines and drains the metric channel.
func (r *Registry) Gather() []Metric {
	r.mtx.RLock()
	collectors := append([]Collector(nil), r.collectors...)
	r.mtx.RUnlock()

	metricChan := make(chan Metric, 16)
	var wg sync.WaitGroup
	wg.Add(len(collectors))
	for _, c := range collectors {
		go func(c Collector) {
			defer wg.Done()
			c.Collect(metricChan)
		}(c)
	}
	go func() {
		wg.Wait()
		close(metricChan)
	}()
	var out []Metric
	for m := range metricChan {
		out = append(out, m)
	}
	return out
}

// ---------------------------------------------------------------------------
// containerd metrics/cgroups/v1
// ---------------------------------------------------------------------------

// Statable type that returns cgroup metrics
type Statable interface {
	ID() string
	Namespace() string
	Stats() (string, error)
}

func taskID(id, namespace string) string {
	return fmt.Sprintf("%s-%s", id, namespace)
}

type entry struct {
	task Statable
	// ns is an optional child namespace that contains additional to parent labels.
	// This can be used to append task specific labels to be able to differentiate the different containerd metrics.
	ns *Namespace
}

type taskMetric struct {
	task   string
	labels Labels
	stats  string
}

func (m taskMetric) Desc() string {
	keys := make([]string, 0, len(m.labels))
	for k, v := range m.labels {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return fmt.Sprintf("container_stats{%s,%s} %s", m.task, strings.Join(keys, ","), m.stats)
}

// NewCollector registers the collector with the provided namespace and returns it so
// that cgroups can be added for collection
func NewCollector(ns *Namespace) *CgroupsCollector {
	if ns == nil {
		return &CgroupsCollector{}
	}
	c := &CgroupsCollector{
		ns:    ns,
		tasks: make(map[string]entry),
	}
	c.storedMetrics = make(chan Metric, 100)
	ns.Add(c)
	return c
}

// CgroupsCollector is v1.Collector: it provides the ability to collect
// container stats and export them in the prometheus format
type CgroupsCollector struct {
	mu sync.RWMutex

	tasks         map[string]entry
	ns            *Namespace
	storedMetrics chan Metric
}

// Collect prometheus metrics
func (c *CgroupsCollector) Collect(ch chan<- Metric) {
	c.mu.RLock()
	wg := &sync.WaitGroup{}
	for _, t := range c.tasks {
		wg.Add(1)
		go c.collect(t, ch, true, wg)
	}
storedLoop:
	for {
		// read stored metrics until the channel is flushed
		select {
		case m := <-c.storedMetrics:
			ch <- m
		default:
			break storedLoop
		}
	}
	c.mu.RUnlock()
	wg.Wait()
}

func (c *CgroupsCollector) collect(entry entry, ch chan<- Metric, block bool, wg *sync.WaitGroup) {
	if wg != nil {
		defer wg.Done()
	}
	t := entry.task
	stats, err := t.Stats()
	if err != nil {
		return
	}
	ns := entry.ns
	if ns == nil {
		ns = c.ns
	}
	ch <- taskMetric{task: t.ID(), labels: ns.labels, stats: stats}
}

// Add adds the provided cgroup and id so that metrics are collected and exported
func (c *CgroupsCollector) Add(t Statable, labels map[string]string) error {
	if c.ns == nil {
		return nil
	}
	c.mu.RLock()
	id := taskID(t.ID(), t.Namespace())
	_, ok := c.tasks[id]
	c.mu.RUnlock()
	if ok {
		return nil // requests to collect metrics should be idempotent
	}

	entry := entry{task: t}
	if labels != nil {
		entry.ns = c.ns.WithConstLabels(labels)
	}

	c.mu.Lock()
	c.tasks[id] = entry
	c.mu.Unlock()
	return nil
}

// cgroupsMonitor (metrics/cgroups/v1/cgroups.go)
type cgroupsMonitor struct {
	collector *CgroupsCollector
}

func (m *cgroupsMonitor) Monitor(c Statable, labels map[string]string) error {
	if err := m.collector.Add(c, labels); err != nil {
		return err
	}
	// oom collector registration trimmed
	return nil
}

// ---------------------------------------------------------------------------
// services/tasks (trimmed) and a shim task stand-in
// ---------------------------------------------------------------------------

// shimTask stands in for the runtime v2 shim task handed to the monitor.
// ready/namespaceRead let the test driver pause task creation inside Add.
type shimTask struct {
	id, namespace string
	namespaceRead chan struct{}
	ready         chan struct{}
	once          sync.Once
}

func (t *shimTask) ID() string { return t.id }

func (t *shimTask) Namespace() string {
	t.once.Do(func() {
		close(t.namespaceRead)
		<-t.ready
	})
	return t.namespace
}

func (t *shimTask) Stats() (string, error) { return "cpu=1", nil }

type local struct {
	monitor *cgroupsMonitor
}

func (l *local) Create(task Statable, runtimeName string) error {
	// ... runtime.Create, shim started ...
	labels := map[string]string{"runtime": runtimeName}
	if err := l.monitor.Monitor(task, labels); err != nil {
		return fmt.Errorf("monitor task: %w", err)
	}
	return nil
}

// ---------------------------------------------------------------------------
// test driver: a task is created while the metrics endpoint is scraped
// ---------------------------------------------------------------------------

func main() {
	ns := NewNamespace("container", "", nil)
	collector := NewCollector(ns)
	Register(ns)
	svc := &local{monitor: &cgroupsMonitor{collector: collector}}

	task := &shimTask{id: "c1", namespace: "k8s.io", namespaceRead: make(chan struct{}), ready: make(chan struct{})}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // tasks.Create
		defer wg.Done()
		if err := svc.Create(task, "io.containerd.runc.v2"); err != nil {
			fmt.Println(err)
		}
	}()
	<-task.namespaceRead // Create is inside Collector.Add

	go func() { // GET /v1/metrics
		defer wg.Done()
		fmt.Println("scraped", len(defaultRegistry.Gather()), "metrics")
	}()
	time.Sleep(20 * time.Millisecond) // the scrape holds ns.mu, waiting on the collector

	close(task.ready)
	wg.Wait()
	fmt.Println("next scrape:", len(defaultRegistry.Gather()), "metrics")
}
