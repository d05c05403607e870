// Project: segmentio/stats (Go metrics library), Prometheus exporter, v4/v5 series.
// Files/functions: prometheus/metric.go (metricStore.collect, metricStore.cleanup,
// metricStore.update/lookup, metricEntry.collect, metricEntry.cleanup, metricState.collect),
// prometheus/handler.go (Handler.HandleMeasures, which triggers cleanup; Handler.ServeHTTP,
// which collects for a scrape).
// Issue/PR: segmentio/stats#194 "Fix deadlock in metrics" (May 2025).
//
// metricEntry.cleanup expires the entry's states while holding entry.mutex and, when the
// entry became empty, calls the empty callback that metricStore.cleanup passed in; that
// closure takes store.mutex.Lock to delete the entry from the store's map, still under
// entry.mutex. A scrape runs metricStore.collect, which holds store.mutex.RLock while it
// walks the entries and read-locks each entry.mutex in metricEntry.collect. A cleanup of
// an entry that empties (entry.mutex -> store.mutex) racing a scrape that reaches the same
// entry (store.mutex -> entry.mutex) deadlock. The fix records whether the entry is empty
// under entry.mutex, releases it, and only then calls empty().
package main

import (
	"fmt"
	"sync"
	"time"
)

type metricKey struct{ scope, name string }

type metric struct {
	name  string
	value float64
	time  time.Time
}

type metricStore struct {
	mutex   sync.RWMutex
	entries map[metricKey]*metricEntry
}

func (store *metricStore) lookup(key metricKey) *metricEntry {
	store.mutex.RLock()
	entry := store.entries[key]
	store.mutex.RUnlock()
	if entry == nil {
		store.mutex.Lock()
		if store.entries == nil {
			store.entries = make(map[metricKey]*metricEntry)
		}
		if entry = store.entries[key]; entry == nil {
			entry = &metricEntry{name: key.name, states: map[string]*metricState{}}
			store.entries[key] = entry
		}
		store.mutex.Unlock()
	}
	return entry
}

func (store *metricStore) update(key metricKey, labels string, value float64, t time.Time) *metricState {
	entry := store.lookup(key)
	state := entry.lookup(labels)
	state.update(value, t)
	return state
}

func (store *metricStore) collect(metrics []metric) []metric {
	store.mutex.RLock()
	for _, entry := range store.entries {
		metrics = entry.collect(metrics)
	}
	store.mutex.RUnlock()
	return metrics
}

func (store *metricStore) cleanup(exp time.Time) {
	store.mutex.RLock()
	for name, entry := range store.entries {
		store.mutex.RUnlock()

		entry.cleanup(exp, func() {
			store.mutex.Lock()
			delete(store.entries, name)
			store.mutex.Unlock()
		})

		store.mutex.RLock()
	}
	store.mutex.RUnlock()
}

type metricEntry struct {
	mutex  sync.RWMutex
	name   string
	states map[string]*metricState
}

func (entry *metricEntry) lookup(labels string) *metricState {
	entry.mutex.Lock()
	defer entry.mutex.Unlock()
	state := entry.states[labels]
	if state == nil {
		state = &metricState{labels: labels}
		entry.states[labels] = state
	}
	return state
}

func (entry *metricEntry) collect(metrics []metric) []metric {
	entry.mutex.RLock()
	for _, state := range entry.states {
		metrics = state.collect(metrics, entry)
	}
	entry.mutex.RUnlock()
	return metrics
}

func (entry *metricEntry) cleanup(exp time.Time, empty func()) {
	entry.mutex.Lock()

	for labels, state := range entry.states {
		state.mutex.Lock()
		expired := !exp.Before(state.time)
		state.mutex.Unlock()
		if expired {
			delete(entry.states, labels)
		}
	}

	isEmpty := len(entry.states) == 0
	entry.mutex.Unlock()

	if isEmpty {
		empty()
	}
}

type metricState struct {
	labels string
	mutex  sync.Mutex
	value  float64
	time   time.Time
}

func (state *metricState) update(value float64, t time.Time) {
	state.mutex.Lock()
	state.value += value
	state.time = t
	state.mutex.Unlock()
}

func (state *metricState) collect(metrics []metric, entry *metricEntry) []metric {
	state.mutex.Lock()
	metrics = append(metrics, metric{name: entry.name, value: state.value, time: state.time})
	state.mutex.Unlock()
	return metrics
}

// Handler is the exporter's http.Handler and stats.Handler, reduced.
type Handler struct {
	MetricTimeout time.Duration
	metrics       metricStore
}

func (h *Handler) cleanup(now time.Time) { h.metrics.cleanup(now.Add(-h.MetricTimeout)) }

func (h *Handler) ServeHTTP() []metric { return h.metrics.collect(nil) }

func main() {
	h := &Handler{MetricTimeout: time.Minute}
	old := time.Now().Add(-time.Hour)
	state := h.metrics.update(metricKey{name: "http_requests_total"}, "code=200", 1, old)

	var wg sync.WaitGroup
	// A measure for the same series is being recorded while the cleanup runs.
	state.mutex.Lock()
	wg.Add(2)
	go func() { // periodic cleanup from HandleMeasures
		defer wg.Done()
		h.cleanup(time.Now())
	}()
	go func() { // a Prometheus scrape
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		fmt.Println("scraped", len(h.ServeHTTP()), "metrics")
	}()
	time.Sleep(60 * time.Millisecond)
	state.mutex.Unlock()
	wg.Wait()
	fmt.Println("done")
}
