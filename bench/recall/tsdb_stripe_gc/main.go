// Modelled on prometheus tsdb/head.go stripeSeries: series are sharded across
// stripes, each with its own RWMutex (lock striping). gc() walks the stripes
// one at a time, holding only that stripe's lock, and for each series calls
// methods that take the series' own mutex (memSeries.mu, a different object).
// Appenders take the stripe lock only to look up / create the series, release
// it, then lock the series; they never hold a series lock while taking a
// stripe lock, so stripe -> series is the only order.
package main

import (
	"fmt"
	"hash/fnv"
	"sync"
)

const stripeSize = 8

type memSeries struct {
	mu      sync.Mutex
	ref     string
	samples []int64 // timestamps
	maxTime int64
}

func (s *memSeries) append(t int64) {
	s.mu.Lock()
	s.samples = append(s.samples, t)
	if t > s.maxTime {
		s.maxTime = t
	}
	s.mu.Unlock()
}

// truncateBefore drops samples older than mint; reports whether empty.
func (s *memSeries) truncateBefore(mint int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.samples) && s.samples[i] < mint {
		i++
	}
	s.samples = s.samples[i:]
	return len(s.samples) == 0
}

type stripeSeries struct {
	series [stripeSize]map[string]*memSeries
	locks  [stripeSize]sync.RWMutex
}

func newStripeSeries() *stripeSeries {
	s := &stripeSeries{}
	for i := range s.series {
		s.series[i] = make(map[string]*memSeries)
	}
	return s
}

func stripeOf(ref string) int {
	h := fnv.New32a()
	h.Write([]byte(ref))
	return int(h.Sum32() % stripeSize)
}

func (s *stripeSeries) getOrCreate(ref string) *memSeries {
	i := stripeOf(ref)
	s.locks[i].RLock()
	ms, ok := s.series[i][ref]
	s.locks[i].RUnlock()
	if ok {
		return ms
	}
	s.locks[i].Lock()
	defer s.locks[i].Unlock()
	if ms, ok = s.series[i][ref]; ok {
		return ms
	}
	ms = &memSeries{ref: ref}
	s.series[i][ref] = ms
	return ms
}

// gc locks one stripe at a time and calls per-series methods under it.
func (s *stripeSeries) gc(mint int64) int {
	removed := 0
	for i := 0; i < stripeSize; i++ {
		s.locks[i].Lock()
		for ref, ms := range s.series[i] {
			if ms.truncateBefore(mint) {
				delete(s.series[i], ref)
				removed++
			}
		}
		s.locks[i].Unlock()
	}
	return removed
}

func main() {
	ss := newStripeSeries()
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for t := int64(0); t < 50; t++ {
				ref := fmt.Sprintf(`up{instance="host-%d"}`, (int(t)+w)%12)
				ss.getOrCreate(ref).append(t)
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; k < 3; k++ {
			ss.gc(10)
		}
	}()
	wg.Wait()
	fmt.Println("removed after final gc:", ss.gc(1000))
}
