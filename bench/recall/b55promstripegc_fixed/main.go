// Project: prometheus/prometheus TSDB head (tsdb/head.go), 3.x, as embedded by Grafana Mimir.
// Files/functions: tsdb/head.go (Head.mmapHeadChunks, mmapHeadChunksInStripe, mmapSeriesChunks,
// Head.gcSeries/truncateSeries, stripeSeries.gcSeries, stripeSeries.iterForDeletion and the
// check callback it runs, memSeries.truncateChunksBefore), tsdb/db.go (DB.run loop).
// Issue prometheus/prometheus#19445 "deadlock on stripeSeries due to lock ordering", fixed by
// PR #19448 "tsdb: fix ABBA lock-ordering deadlock in gc/gcSeries check callbacks" (August 2026).
//
// The head keeps every series in two striped maps: by series ref (stripe refShard) and by label
// hash (stripe hashShard), each stripe guarded by its own RWMutex. The DB.run loop memory-maps
// full head chunks stripe by stripe: it read-locks stripe i of the ref map and then locks each
// series in it (mmapSeriesChunks). Series GC (called by Mimir from another goroutine through
// CompactSelectedSeries/truncateSeries) walks the hash stripes with iterForDeletion, which
// write-locks stripe hashShard and runs the check closure per series; the closure locks the
// series, truncates its chunks, and, when the series is being deleted and its ref lives in
// another stripe, write-locks that ref stripe too. So GC orders series lock -> ref stripe lock
// while the mmap loop orders ref stripe lock -> series lock, and a series whose hash and ref
// stripes differ wedges both goroutines (the pending writer also blocks new readers, so nothing
// else can get the stripe either). The fix takes the ref stripe lock before the series lock in
// the check callbacks.
package main

import (
	"fmt"
	"sync"
	"time"
)

type HeadSeriesRef uint64

type memSeries struct {
	sync.Mutex
	ref           HeadSeriesRef
	lset          string
	mmappedChunks []int
	headChunks    int
	lastTs        int64
}

func (s *memSeries) mmapChunks() int {
	n := s.headChunks
	for i := 0; i < n; i++ {
		s.mmappedChunks = append(s.mmappedChunks, len(s.mmappedChunks))
	}
	s.headChunks = 0
	return n
}

// truncateChunksBefore drops chunks older than mint; dropping m-mapped chunks releases the
// chunk disk mapper's files.
func (s *memSeries) truncateChunksBefore(mint int64) int {
	removed := len(s.mmappedChunks)
	if removed > 0 {
		time.Sleep(100 * time.Millisecond) // unmapping and removing the chunk files
	}
	s.mmappedChunks = nil
	return removed
}

type seriesHashmap struct {
	unique    map[uint64]*memSeries
	conflicts map[uint64][]*memSeries
}

func (m *seriesHashmap) del(hash uint64, ref HeadSeriesRef) {
	if s, ok := m.unique[hash]; ok && s.ref == ref {
		delete(m.unique, hash)
	}
}

type stripeSeries struct {
	size   int
	series []map[HeadSeriesRef]*memSeries
	hashes []seriesHashmap
	locks  []sync.RWMutex
}

func newStripeSeries(size int) *stripeSeries {
	s := &stripeSeries{size: size, series: make([]map[HeadSeriesRef]*memSeries, size),
		hashes: make([]seriesHashmap, size), locks: make([]sync.RWMutex, size)}
	for i := range s.series {
		s.series[i] = map[HeadSeriesRef]*memSeries{}
		s.hashes[i] = seriesHashmap{unique: map[uint64]*memSeries{}, conflicts: map[uint64][]*memSeries{}}
	}
	return s
}

func (s *stripeSeries) add(hash uint64, series *memSeries) {
	s.series[int(series.ref)&(s.size-1)][series.ref] = series
	s.hashes[int(hash)&(s.size-1)].unique[hash] = series
}

func (s *stripeSeries) iterForDeletion(checkDeletedFunc func(int, uint64, *memSeries, map[HeadSeriesRef]string)) int {
	total := 0
	for i := 0; i < s.size; i++ {
		deleted := map[HeadSeriesRef]string{}
		s.locks[i].Lock()
		for hash, series := range s.hashes[i].unique {
			checkDeletedFunc(i, hash, series, deleted)
		}
		s.locks[i].Unlock()
		total += len(deleted)
	}
	return total
}

// gcSeries removes the series selected by shouldDelete from the stripe series.
func (s *stripeSeries) gcSeries(mint int64, shouldDelete func(*memSeries) bool) int {
	check := func(hashShard int, hash uint64, series *memSeries, deleted map[HeadSeriesRef]string) {
		// Take the ref stripe lock before the series lock, the order every
		// other path (including mmapHeadChunks) uses.
		refShard := int(series.ref) & (s.size - 1)
		if hashShard != refShard {
			s.locks[refShard].Lock()
			defer s.locks[refShard].Unlock()
		}
		series.Lock()
		defer series.Unlock()
		series.truncateChunksBefore(mint)
		if !shouldDelete(series) {
			return
		}
		s.hashes[hashShard].del(hash, series.ref)
		delete(s.series[refShard], series.ref)
		deleted[series.ref] = series.lset
	}
	return s.iterForDeletion(check)
}

type Head struct{ series *stripeSeries }

func (h *Head) mmapHeadChunks() int {
	count := 0
	for i := 0; i < h.series.size; i++ {
		count += h.mmapHeadChunksInStripe(i)
	}
	return count
}

func (h *Head) mmapHeadChunksInStripe(i int) int {
	h.series.locks[i].RLock()
	defer h.series.locks[i].RUnlock()
	count := 0
	for _, series := range h.series.series[i] {
		count += h.mmapSeriesChunks(series)
	}
	return count
}

func (h *Head) mmapSeriesChunks(s *memSeries) int {
	s.Lock()
	defer s.Unlock()
	return s.mmapChunks()
}

// truncateSeries is what Mimir reaches through CompactSelectedSeries.
func (h *Head) truncateSeries(mint int64, selected map[HeadSeriesRef]bool) int {
	return h.series.gcSeries(mint, func(s *memSeries) bool { return selected[s.ref] })
}

func main() {
	h := &Head{series: newStripeSeries(4)}
	// ref 1 lives in ref stripe 1, its label hash in hash stripe 3.
	h.series.add(0x0b, &memSeries{ref: 1, lset: `{__name__="up",job="api"}`, headChunks: 2, mmappedChunks: []int{0}})
	h.series.add(0x10, &memSeries{ref: 4, lset: `{__name__="up",job="db"}`, headChunks: 1})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // CompactSelectedSeries from another goroutine
		defer wg.Done()
		fmt.Println("gc deleted", h.truncateSeries(1000, map[HeadSeriesRef]bool{1: true}))
	}()
	go func() { // DB.run loop
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		fmt.Println("mmapped", h.mmapHeadChunks())
	}()
	wg.Wait()
}
