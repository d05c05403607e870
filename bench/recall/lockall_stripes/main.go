// Style: like prometheus tsdb stripeSeries. Each stripe has its own lock;
// compaction/GC takes every stripe via lockAll() and releases them in a
// different method, unlockAll(). Individual writers take exactly one stripe.
package main

import (
	"fmt"
	"sync"
)

const stripeCount = 8

type stripeLock struct {
	sync.RWMutex
	_ [40]byte // padding, as in prometheus
}

type series struct {
	ref     uint64
	samples []float64
}

type stripeSeries struct {
	locks  [stripeCount]stripeLock
	series [stripeCount]map[uint64]*series
}

func newStripeSeries() *stripeSeries {
	s := &stripeSeries{}
	for i := range s.series {
		s.series[i] = map[uint64]*series{}
	}
	return s
}

// lockAll acquires every stripe in index order. Callers must call unlockAll.
func (s *stripeSeries) lockAll() {
	for i := range s.locks {
		s.locks[i].Lock()
	}
}

func (s *stripeSeries) unlockAll() {
	for i := len(s.locks) - 1; i >= 0; i-- {
		s.locks[i].Unlock()
	}
}

func (s *stripeSeries) append(ref uint64, v float64) {
	i := ref % stripeCount
	s.locks[i].Lock()
	sr, ok := s.series[i][ref]
	if !ok {
		sr = &series{ref: ref}
		s.series[i][ref] = sr
	}
	sr.samples = append(sr.samples, v)
	s.locks[i].Unlock()
}

// gc truncates every series to at most keep samples and returns the number of
// samples dropped. It needs a consistent view across stripes.
func (s *stripeSeries) gc(keep int) int {
	s.lockAll()
	defer s.unlockAll()
	dropped := 0
	for i := range s.series {
		for _, sr := range s.series[i] {
			if n := len(sr.samples); n > keep {
				dropped += n - keep
				sr.samples = append([]float64(nil), sr.samples[n-keep:]...)
			}
		}
	}
	return dropped
}

func main() {
	s := newStripeSeries()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				s.append(uint64(i%37), float64(w*i))
			}
		}(w)
	}
	dropped := 0
	for i := 0; i < 5; i++ {
		dropped += s.gc(10)
	}
	wg.Wait()
	dropped += s.gc(10)
	fmt.Println("dropped:", dropped)
}
