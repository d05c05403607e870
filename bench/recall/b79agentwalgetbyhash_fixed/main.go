// Project: grafana/agent (pkg/prom/wal/series.go and wal.go, the Prometheus-instance WAL), v0.6/v0.7 (approximate), September 2020.
// Bug: stripeSeries keeps series by ref and a label-hash index that only stores refs, so getByHash (the appender's lookup) read-locks
// the hash stripe and then the ref stripe. gc, run by WAL truncation, write-locks the ref stripe it is sweeping and then the hash stripe
// of each series it deletes. An append looking up a series while truncation deletes another series with the crossed stripes locks the
// two stripe locks in the opposite order (issue #184, fixed by PR #185: the hash index stores *memSeries, so getByHash needs one lock).
package main

import (
	"fmt"
	"sync"
	"time"
)

type Label struct{ Name, Value string }

type Labels []Label

func (ls Labels) Equal(o Labels) bool {
	if len(ls) != len(o) {
		return false
	}
	for i := range ls {
		if ls[i] != o[i] {
			return false
		}
	}
	return true
}

type memSeries struct {
	sync.Mutex
	ref           uint64
	hash          uint64
	lastTs        int64
	willDelete    bool
	pendingCommit bool
}

func (s *memSeries) updateTs(ts int64) {
	s.lastTs = ts
	s.willDelete = false
	s.pendingCommit = true
}

// seriesHashmap is a simple hashmap for series by their label set; it refers to the series directly.
type seriesHashmap map[uint64][]*refLabelsPair

type refLabelsPair struct {
	series *memSeries
	labels Labels
}

func (m seriesHashmap) get(hash uint64, lset Labels) *memSeries {
	for _, s := range m[hash] {
		if s.labels.Equal(lset) {
			return s.series
		}
	}
	return nil
}

func (m seriesHashmap) set(hash uint64, lset Labels, series *memSeries) {
	m[hash] = append(m[hash], &refLabelsPair{series: series, labels: lset})
}

func (m seriesHashmap) del(hash uint64, ref uint64) {
	var rem []*refLabelsPair
	for _, s := range m[hash] {
		if s.series.ref != ref {
			rem = append(rem, s)
		}
	}
	if len(rem) == 0 {
		delete(m, hash)
	} else {
		m[hash] = rem
	}
}

type stripeLock struct {
	sync.RWMutex
	_ [40]byte // padding to avoid false sharing
}

// stripeSeries locks modulo ranges of IDs and hashes to reduce lock contention.
type stripeSeries struct {
	size   int
	series []map[uint64]*memSeries
	hashes []seriesHashmap
	locks  []stripeLock
}

func newStripeSeries(stripeSize int) *stripeSeries {
	s := &stripeSeries{size: stripeSize, series: make([]map[uint64]*memSeries, stripeSize),
		hashes: make([]seriesHashmap, stripeSize), locks: make([]stripeLock, stripeSize)}
	for i := range s.series {
		s.series[i] = map[uint64]*memSeries{}
		s.hashes[i] = seriesHashmap{}
	}
	return s
}

// gc removes series that have not been written to since mint for two cycles.
func (s *stripeSeries) gc(mint int64) map[uint64]struct{} {
	deleted := map[uint64]struct{}{}
	for i := 0; i < s.size; i++ {
		s.locks[i].Lock()
		for _, series := range s.series[i] {
			series.Lock()
			if series.lastTs >= mint || series.pendingCommit {
				series.willDelete = false
				series.Unlock()
				continue
			}
			if !series.willDelete {
				series.willDelete = true
				series.Unlock()
				continue
			}
			// The series is gone entirely; we also need the lock of its label hash stripe.
			j := int(series.hash) & (s.size - 1)
			if i != j {
				s.locks[j].Lock()
			}
			deleted[series.ref] = struct{}{}
			delete(s.series[i], series.ref)
			s.hashes[j].del(series.hash, series.ref)
			if i != j {
				s.locks[j].Unlock()
			}
			series.Unlock()
		}
		s.locks[i].Unlock()
	}
	return deleted
}

// getByHash looks up a series that was saved via saveLabels.
func (s *stripeSeries) getByHash(hash uint64, lset Labels) *memSeries {
	i := hash & uint64(s.size-1)
	s.locks[i].RLock()
	series := s.hashes[i].get(hash, lset)
	s.locks[i].RUnlock()
	return series
}

func (s *stripeSeries) set(series *memSeries) {
	i := series.ref & uint64(s.size-1)
	s.locks[i].Lock()
	s.series[i][series.ref] = series
	s.locks[i].Unlock()
}

func (s *stripeSeries) saveLabels(hash uint64, series *memSeries, lbls Labels) {
	i := hash & uint64(s.size-1)
	s.locks[i].Lock()
	s.hashes[i].set(hash, lbls, series)
	s.locks[i].Unlock()
}

// Storage is the agent's WAL-backed storage; appenders and Truncate share the series stripes.
type Storage struct{ series *stripeSeries }

type appender struct{ w *Storage }

func (a *appender) Add(hash uint64, l Labels, t int64, v float64) (uint64, error) {
	series := a.w.series.getByHash(hash, l)
	if series == nil {
		return 0, fmt.Errorf("series %v not found", l)
	}
	series.Lock()
	series.updateTs(t)
	series.Unlock()
	return series.ref, nil
}

func (w *Storage) Truncate(mint int64) int { return len(w.series.gc(mint)) }

func main() {
	const stripes = 4
	w := &Storage{series: newStripeSeries(stripes)}
	// Stale series: ref in stripe 0, label hash in stripe 1, already marked by the previous gc cycle.
	for ref := uint64(stripes); ref <= 200000*stripes; ref += stripes {
		s := &memSeries{ref: ref, hash: ref + 1, lastTs: 10, willDelete: true}
		w.series.set(s)
		w.series.saveLabels(s.hash, s, Labels{{"__name__", "up"}, {"instance", fmt.Sprint(ref)}})
	}
	// Live series scraped right now: ref in stripe 0, hash in stripe 1.
	live := &memSeries{ref: 800008, hash: 1, lastTs: 1000}
	liveLbls := Labels{{"__name__", "http_requests_total"}, {"job", "api"}}
	w.series.set(live)
	w.series.saveLabels(live.hash, live, liveLbls)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); fmt.Println("truncated", w.Truncate(500)) }()
	time.Sleep(time.Millisecond)
	go func() {
		defer wg.Done()
		app := &appender{w: w}
		for i := int64(0); i < 1000; i++ {
			_, _ = app.Add(live.hash, liveLbls, 1000+i, 1)
		}
		fmt.Println("appended")
	}()
	wg.Wait()
}
