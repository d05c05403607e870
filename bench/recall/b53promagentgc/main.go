// Project: prometheus/prometheus v2.32.x (the new agent mode, tsdb/agent).
// Files: tsdb/agent/series.go (stripeSeries.Set, stripeSeries.GC, stripeSeries.GetByHash,
// memSeries), tsdb/agent/db.go (appender.Append, appender.Add, appender.AddFast,
// DB.truncate, DB.gc, the DB.run loop).
// Issue: prometheus/prometheus#10151 (agent stops writing).
// Fix: prometheus/prometheus#10166 "tsdb/agent: Fix deadlock from simultaneous GC and write"
// (released in v2.33.0-rc.1).
//
// The agent's stripeSeries indexes series by the stripe of their ref (s.series) and of their label
// hash (s.hashes), each stripe guarded by s.locks[i]. GC holds locks[hashLock] and, for a stale
// series, takes locks[refLock] of that series' ref. Set, called by appender.Add for a new series,
// held locks[hashLock] of the new series while taking its locks[refLock]. A stale series hashed into
// stripe 0 with its ref in stripe 1, and a new series hashed into stripe 1 with its ref in stripe 0,
// make GC wait for stripe 1 holding stripe 0 while Add waits for stripe 0 holding stripe 1. The fix
// makes Set take the two stripe locks one after the other, the ref stripe first.
package main

import (
	"fmt"
	"hash/fnv"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

type Labels []struct{ Name, Value string }

func (ls Labels) Hash() uint64 {
	h := fnv.New64a()
	h.Write([]byte(fmt.Sprint(ls)))
	return h.Sum64()
}

type HeadSeriesRef uint64
type memSeries struct {
	sync.Mutex
	ref    HeadSeriesRef
	lset   Labels
	lastTs int64
}

type seriesHashmap map[uint64][]*memSeries

func (m seriesHashmap) Get(hash uint64, lset Labels) *memSeries {
	for _, s := range m[hash] {
		if fmt.Sprint(s.lset) == fmt.Sprint(lset) {
			return s
		}
	}
	return nil
}

func (m seriesHashmap) Set(hash uint64, s *memSeries) { m[hash] = append(m[hash], s) }

func (m seriesHashmap) Delete(hash uint64, ref HeadSeriesRef) {
	for i, s := range m[hash] {
		if s.ref == ref {
			m[hash] = append(m[hash][:i:i], m[hash][i+1:]...)
			return
		}
	}
}

type stripeLock struct{ sync.RWMutex } // padded to a cache line in the real code
type stripeSeries struct {
	size   int
	series []map[HeadSeriesRef]*memSeries
	hashes []seriesHashmap
	locks  []stripeLock
}

func newStripeSeries(stripeSize int) *stripeSeries { // Options.StripeSize, 1<<14 by default
	s := &stripeSeries{size: stripeSize, series: make([]map[HeadSeriesRef]*memSeries, stripeSize),
		hashes: make([]seriesHashmap, stripeSize), locks: make([]stripeLock, stripeSize)}
	for i := range s.series {
		s.series[i], s.hashes[i] = map[HeadSeriesRef]*memSeries{}, seriesHashmap{}
	}
	return s
}

func (s *stripeSeries) GC(mint int64) map[HeadSeriesRef]struct{} {
	deleted := map[HeadSeriesRef]struct{}{}
	for hashLock := 0; hashLock < s.size; hashLock++ {
		s.locks[hashLock].Lock()
		for hash, all := range s.hashes[hashLock] {
			for _, series := range all {
				series.Lock()
				// Any series that has received a write since mint is still alive.
				if series.lastTs >= mint {
					series.Unlock()
					continue
				}
				// The series is stale. Obtain a second lock for the ref if it differs from the hash lock.
				refLock := int(series.ref) & (s.size - 1)
				if hashLock != refLock {
					s.locks[refLock].Lock()
				}
				deleted[series.ref] = struct{}{}
				delete(s.series[refLock], series.ref)
				s.hashes[hashLock].Delete(hash, series.ref)
				if hashLock != refLock {
					s.locks[refLock].Unlock()
				}
				series.Unlock()
			}
		}
		s.locks[hashLock].Unlock()
	}
	return deleted
}

func (s *stripeSeries) GetByHash(hash uint64, lset Labels) *memSeries {
	hashLock := hash & uint64(s.size-1)
	s.locks[hashLock].RLock()
	defer s.locks[hashLock].RUnlock()
	return s.hashes[hashLock].Get(hash, lset)
}

func (s *stripeSeries) Set(hash uint64, series *memSeries) {
	hashLock := hash & uint64(s.size-1)
	refLock := uint64(series.ref) & uint64(s.size-1)
	s.locks[hashLock].Lock()
	defer s.locks[hashLock].Unlock()
	if hashLock != refLock {
		s.locks[refLock].Lock()
		defer s.locks[refLock].Unlock()
	}
	s.hashes[hashLock].Set(hash, series)
	s.series[refLock][series.ref] = series
}

type DB struct {
	series  *stripeSeries
	nextRef atomic.Uint64
	deleted map[HeadSeriesRef]int64
}
type appender struct {
	*DB
	pendingSamples []HeadSeriesRef
}

func (db *DB) Appender() *appender { return &appender{DB: db} }

func (a *appender) Append(ref HeadSeriesRef, l Labels, t int64, v float64) (HeadSeriesRef, error) {
	if ref == 0 {
		return a.Add(l, t, v)
	}
	a.pendingSamples = append(a.pendingSamples, ref) // AddFast
	return ref, nil
}

func (a *appender) Add(l Labels, t int64, v float64) (HeadSeriesRef, error) {
	hash := l.Hash()
	if series := a.series.GetByHash(hash, l); series != nil {
		return a.Append(series.ref, l, t, v)
	}
	ref := HeadSeriesRef(a.nextRef.Add(1))
	series := &memSeries{ref: ref, lset: l, lastTs: t}
	a.pendingSamples = append(a.pendingSamples, ref)
	a.series.Set(hash, series)
	return series.ref, nil
}

// truncate is what the DB.run loop calls every TruncateFrequency (gc inlined).
func (db *DB) truncate(mint int64) {
	for ref := range db.series.GC(mint) {
		db.deleted[ref] = math.MaxInt64 // kept until the WAL no longer references it
	}
}

func labelsInStripe(prefix string, stripe, size uint64) Labels {
	for i := 0; ; i++ {
		l := Labels{{"__name__", "up"}, {"job", fmt.Sprintf("%s-%d", prefix, i)}}
		if l.Hash()&(size-1) == stripe {
			return l
		}
	}
}

func main() {
	db := &DB{series: newStripeSeries(2), deleted: map[HeadSeriesRef]int64{}}
	stale := labelsInStripe("old", 0, 2) // ref 1: hash stripe 0, ref stripe 1
	fresh := labelsInStripe("new", 1, 2) // ref 2: hash stripe 1, ref stripe 0
	db.Appender().Append(0, stale, 1000, 1)
	// A scrape appending to the stale series holds its series lock for a moment.
	y := db.series.GetByHash(stale.Hash(), stale)
	y.Lock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); db.truncate(5000) }() // DB.run: WAL truncation + GC
	time.Sleep(50 * time.Millisecond)
	go func() { defer wg.Done(); db.Appender().Append(0, fresh, 6000, 1) }() // new target scraped
	time.Sleep(50 * time.Millisecond)
	y.Unlock()
	wg.Wait()
	fmt.Println("gc and append done, deleted:", len(db.deleted))
}
