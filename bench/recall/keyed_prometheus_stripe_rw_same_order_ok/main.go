// Modeled on Prometheus tsdb's stripeSeries: series are sharded over a
// power-of-two number of stripes, each with its own RWMutex, found through
// an accessor (ref & (size-1)). The head also has a postings cache guarded
// by an RWMutex.
//
// CORRECT: readers (Lookup: stripe RLock -> cache RLock), writers
// (Create: stripe Lock -> cache Lock) and GC (per stripe: stripe Lock ->
// cache Lock) all use the same order stripe -> cache, and each holds only
// one stripe at a time. The cache lock is never held while a stripe lock is
// requested. No cycle, regardless of read/write mode.
package main

import (
	"fmt"
	"sync"
)

const stripeSize = 16

type stripeLock struct {
	sync.RWMutex
	_ [40]byte // padding against false sharing, as in Prometheus
}

type stripeSeries struct {
	series [stripeSize]map[uint64]string
	locks  [stripeSize]stripeLock
}

func (s *stripeSeries) lockFor(ref uint64) *sync.RWMutex {
	return &s.locks[ref&(stripeSize-1)].RWMutex
}

type Head struct {
	series   stripeSeries
	cacheMu  sync.RWMutex
	postings map[string][]uint64
}

func (h *Head) Create(ref uint64, name string) {
	l := h.series.lockFor(ref)
	l.Lock()
	defer l.Unlock()
	h.series.series[ref&(stripeSize-1)][ref] = name
	h.cacheMu.Lock()
	h.postings[name] = append(h.postings[name], ref)
	h.cacheMu.Unlock()
}

func (h *Head) Lookup(ref uint64) int {
	l := h.series.lockFor(ref)
	l.RLock()
	defer l.RUnlock()
	name := h.series.series[ref&(stripeSize-1)][ref]
	h.cacheMu.RLock()
	defer h.cacheMu.RUnlock()
	return len(h.postings[name])
}

func (h *Head) gc() {
	for i := uint64(0); i < stripeSize; i++ {
		l := h.series.lockFor(i)
		l.Lock()
		h.cacheMu.Lock()
		for ref, name := range h.series.series[i] {
			if ref%5 == 0 {
				delete(h.series.series[i], ref)
				delete(h.postings, name)
			}
		}
		h.cacheMu.Unlock()
		l.Unlock()
	}
}

func main() {
	h := &Head{postings: map[string][]uint64{}}
	for i := range h.series.series {
		h.series.series[i] = map[uint64]string{}
	}
	var wg sync.WaitGroup
	for i := uint64(0); i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.Create(i, fmt.Sprint("metric_", i%7))
			h.Lookup(i)
			if i%10 == 0 {
				h.gc()
			}
		}()
	}
	wg.Wait()
	fmt.Println(len(h.postings))
}
