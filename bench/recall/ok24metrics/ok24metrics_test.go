// Pattern: a hierarchical metrics registry. Child registries of the same type
// are created in a loop under their parent; Snapshot holds a parent's read
// lock while snapshotting children (always parent before child, by level).
// Read paths call collectLocked, which must hold mu and does not lock. The
// logger is called under the write lock with *Counter operands whose String()
// reads only an immutable name and an atomic value. Flush hands a request to
// an exporter goroutine that takes the registry locks, and receives the
// reply only after releasing the mutex.
package ok24metrics

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
)

type Logger interface {
	Debugf(format string, args ...any)
}

type nopLogger struct{ n atomic.Int64 }

func (l *nopLogger) Debugf(format string, args ...any) {
	_ = fmt.Sprintf(format, args...)
	l.n.Add(1)
}

type Counter struct {
	name string
	v    atomic.Int64
}

func (c *Counter) Inc()           { c.v.Add(1) }
func (c *Counter) String() string { return fmt.Sprintf("%s=%d", c.name, c.v.Load()) }

type Registry struct {
	mu       sync.RWMutex
	prefix   string
	level    int
	counters map[string]*Counter
	children []*Registry
	log      Logger
	flushes  int
	exportq  chan chan map[string]int64
}

func NewRegistry(prefix string, log Logger) *Registry {
	r := &Registry{prefix: prefix, counters: map[string]*Counter{}, log: log, exportq: make(chan chan map[string]int64)}
	return r
}

func (r *Registry) Sub(name string) *Registry {
	r.mu.Lock()
	defer r.mu.Unlock()
	child := &Registry{prefix: r.prefix + "." + name, level: r.level + 1, counters: map[string]*Counter{}, log: r.log}
	r.children = append(r.children, child)
	r.log.Debugf("sub registry %s level=%d", child.prefix, child.level)
	return child
}

func (r *Registry) Counter(name string) *Counter {
	r.mu.RLock()
	c, ok := r.counters[name]
	r.mu.RUnlock()
	if ok {
		return c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok = r.counters[name]; !ok {
		c = &Counter{name: r.prefix + "." + name}
		r.counters[name] = c
		r.log.Debugf("registered %v", c)
	}
	return c
}

// collectLocked must hold mu (read or write).
func (r *Registry) collectLocked(into map[string]int64) {
	for _, c := range r.counters {
		into[c.name] = c.v.Load()
	}
}

func (r *Registry) Snapshot() map[string]int64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := map[string]int64{}
	r.collectLocked(out)
	for _, child := range r.children {
		for k, v := range child.Snapshot() {
			out[k] = v
		}
	}
	return out
}

// RunExporter serves Flush requests until stop is closed.
func (r *Registry) RunExporter(stop <-chan struct{}, done *sync.WaitGroup) {
	defer done.Done()
	for {
		select {
		case <-stop:
			return
		case reply := <-r.exportq:
			reply <- r.Snapshot()
		}
	}
}

func (r *Registry) Flush() map[string]int64 {
	r.mu.Lock()
	r.flushes++
	reply := make(chan map[string]int64, 1)
	r.mu.Unlock()

	r.exportq <- reply
	return <-reply
}

func TestProbe(t *testing.T) {
	log := &nopLogger{}
	root := NewRegistry("app", log)
	var subs []*Registry
	for i := 0; i < 3; i++ {
		sub := root.Sub(fmt.Sprintf("svc%d", i))
		subs = append(subs, sub, sub.Sub("db"))
	}

	stop := make(chan struct{})
	var exporter sync.WaitGroup
	exporter.Add(1)
	go root.RunExporter(stop, &exporter)

	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			reg := subs[g]
			for i := 0; i < 100; i++ {
				reg.Counter(fmt.Sprintf("req%d", i%3)).Inc()
				root.Counter("total").Inc()
				if i%25 == 0 {
					_ = root.Flush()
				}
			}
		}(g)
	}
	wg.Wait()

	snap := root.Flush()
	close(stop)
	exporter.Wait()

	if snap["app.total"] != 600 {
		t.Fatalf("total = %d", snap["app.total"])
	}
	keys := make([]string, 0, len(snap))
	for k := range snap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) != 1+6*3 {
		t.Fatalf("unexpected keys %v", keys)
	}
	root.mu.RLock()
	defer root.mu.RUnlock()
	if root.flushes != 25 {
		t.Fatalf("flushes = %d", root.flushes)
	}
}
