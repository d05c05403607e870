// Project: codahale/metrics (minimalist counters, gauges and HDR histograms
// published as expvars), 2016.
// Files/functions: metrics.go (Gauges, NewHistogram, Gauge.SetBatchFunc,
// Histogram.merge/valueAt, the package-level cm/gm/hm mutexes, the expvar
// "gauges" func registered in init).
// Fix: PR #16 "locking: Prevent deadlock by making lock ordering consistent."
//
// The package keeps three mutexes: cm for counters, gm for gauges and hm for
// histograms. Gauges(), which the expvar handler behind /debug/vars calls,
// locks gm and then hm so it can run the histogram merge initializers. A
// service that creates a histogram lazily calls NewHistogram, which locks hm,
// registers the histogram and then publishes its quantile gauges through
// Gauge(name+".P50").SetBatchFunc, which locks gm. A scrape of /debug/vars
// racing with a new histogram deadlocks: the handler holds gm and waits for
// hm, NewHistogram holds hm and waits for gm, and every later counter, gauge
// or histogram registration hangs behind them. The fix takes the locks in
// one order everywhere: hm first, then gm, then cm.
package main

import (
	"fmt"
	"sync"
	"time"
)

// A Gauge is an instantaneous measurement of a value.
type Gauge string

// SetBatchFunc sets the gauge's value to the lazily-called return value of
// the given function, with an additional initializer function for a related
// batch of gauges, all of which are keyed by an arbitrary value.
func (g Gauge) SetBatchFunc(key interface{}, init func(), f func() float64) {
	gm.Lock()
	gauges[string(g)] = f
	if _, ok := inits[key]; !ok {
		inits[key] = init
	}
	gm.Unlock()
}

// Gauges returns a snapshot of the current values of all gauges.
func Gauges() map[string]float64 {
	gm.Lock()
	defer gm.Unlock()

	hm.Lock()
	defer hm.Unlock()

	for _, init := range inits {
		init()
	}

	g := make(map[string]float64, len(gauges))
	for n, f := range gauges {
		g[n] = f()
	}
	return g
}

// windowedHistogram stands in for hdr.WindowedHistogram.
type windowedHistogram struct {
	values []int64
}

func newWindowedHistogram(n int, minValue, maxValue int64, sigfigs int) *windowedHistogram {
	time.Sleep(50 * time.Millisecond) // allocating the bucket arrays
	return &windowedHistogram{}
}

// NewHistogram returns a windowed HDR histogram which drops data older than
// five minutes.
func NewHistogram(name string, minValue, maxValue int64, sigfigs int) *Histogram {
	hm.Lock()
	defer hm.Unlock()

	if _, ok := histograms[name]; ok {
		panic(name + " already exists")
	}

	hist := &Histogram{hist: newWindowedHistogram(5, minValue, maxValue, sigfigs)}
	histograms[name] = hist

	Gauge(name+".P50").SetBatchFunc(name, hist.merge, hist.valueAt(50))
	Gauge(name+".P99").SetBatchFunc(name, hist.merge, hist.valueAt(99))
	return hist
}

// A Histogram measures the distribution of a stream of values.
type Histogram struct {
	hist   *windowedHistogram
	merged []int64
	rw     sync.RWMutex
}

func (h *Histogram) RecordValue(v int64) {
	h.rw.Lock()
	defer h.rw.Unlock()
	h.hist.values = append(h.hist.values, v)
}

func (h *Histogram) merge() {
	h.rw.Lock()
	defer h.rw.Unlock()
	h.merged = append([]int64(nil), h.hist.values...)
}

func (h *Histogram) valueAt(q float64) func() float64 {
	return func() float64 {
		h.rw.RLock()
		defer h.rw.RUnlock()
		if len(h.merged) == 0 {
			return 0
		}
		return float64(h.merged[int(float64(len(h.merged)-1)*q/100)])
	}
}

var (
	gauges     = make(map[string]func() float64)
	inits      = make(map[interface{}]func())
	histograms = make(map[string]*Histogram)

	gm, hm sync.Mutex
)

func main() {
	requests := NewHistogram("requests", 1, 1000, 3)
	requests.RecordValue(12)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // a handler registers its latency histogram on first use
		defer wg.Done()
		NewHistogram("db.latency", 1, 60000, 3)
	}()
	time.Sleep(20 * time.Millisecond)
	go func() { // GET /debug/vars evaluates the "gauges" expvar
		defer wg.Done()
		fmt.Println(Gauges())
	}()
	wg.Wait()
}
