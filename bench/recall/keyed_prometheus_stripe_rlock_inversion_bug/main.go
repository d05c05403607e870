// Modeled on Prometheus tsdb's stripeSeries (RWMutex stripes reached through
// an accessor, ref & (size-1)) next to the head's symbol table mutex.
//
// BUGGY: AB-BA inversion between a stripe RWMutex and h.symMtx, with the
// stripe taken in READ mode on one side.
//   - Labels holds the stripe for ref with RLock (lockFor(ref).RLock()) and
//     then takes h.symMtx at main.go:56.
//   - gc holds h.symMtx and then takes the stripe in WRITE mode via
//     lockFor(ref).Lock() at main.go:68.
//
// A held read lock blocks the writer, so Labels (holding the stripe's read
// lock, waiting for symMtx) and gc (holding symMtx, waiting for the stripe
// write lock) deadlock. Read-mode on one side does not make this safe.
package main

import (
	"fmt"
	"sync"
)

const stripeSize = 8

type stripeLock struct {
	sync.RWMutex
	_ [40]byte
}

type stripeSeries struct {
	series [stripeSize]map[uint64]string
	locks  [stripeSize]stripeLock
}

func (s *stripeSeries) lockFor(ref uint64) *sync.RWMutex {
	return &s.locks[ref&(stripeSize-1)].RWMutex
}

type Head struct {
	series  stripeSeries
	symMtx  sync.Mutex
	symbols map[string]int // symbol -> refcount
}

func (h *Head) Add(ref uint64, name string) {
	l := h.series.lockFor(ref)
	l.Lock()
	h.series.series[ref&(stripeSize-1)][ref] = name
	l.Unlock()
}

// Labels: stripe RLock -> symMtx
func (h *Head) Labels(ref uint64) string {
	l := h.series.lockFor(ref)
	l.RLock()
	defer l.RUnlock()
	name := h.series.series[ref&(stripeSize-1)][ref]
	h.symMtx.Lock()
	h.symbols[name]++
	h.symMtx.Unlock()
	return name
}

// gc: symMtx -> stripe Lock (inverted)
func (h *Head) gc(dead []uint64) {
	h.symMtx.Lock()
	defer h.symMtx.Unlock()
	for _, ref := range dead {
		l := h.series.lockFor(ref)
		l.Lock()
		name := h.series.series[ref&(stripeSize-1)][ref]
		delete(h.series.series[ref&(stripeSize-1)], ref)
		delete(h.symbols, name)
		l.Unlock()
	}
}

func main() {
	h := &Head{symbols: map[string]int{}}
	for i := range h.series.series {
		h.series.series[i] = map[uint64]string{}
	}
	for i := uint64(0); i < 32; i++ {
		h.Add(i, fmt.Sprint("up_", i%5))
	}
	var wg sync.WaitGroup
	for i := uint64(0); i < 16; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); h.Labels(i) }()
		go func() { defer wg.Done(); h.gc([]uint64{i, i + 16}) }()
	}
	wg.Wait()
	fmt.Println(len(h.symbols))
}
