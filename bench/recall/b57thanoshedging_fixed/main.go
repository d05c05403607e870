// Project: thanos-io/thanos, object-storage HTTP transport with request
// hedging (v0.37 development, late 2024).
// Files/functions: pkg/exthttp/hedging.go: hedgingRoundTripper.RoundTrip,
// hedgingRoundTripper.nextFn, CreateHedgedTransportWithConfig; the hedged
// transport comes from github.com/cristalhq/hedgedhttp (Config.Next is the
// nextFn method value, Config.Transport is the hedging round tripper), the
// latency digest from github.com/caio/go-tdigest.
// Fix: thanos-io/thanos PR #7962 "Fix potential deadlock in hedging request"
// (December 2024): "fixes the potential deadlock situation when the
// `err = hrt.TDigest.Add(duration)` line gets an error".
//
// RoundTrip records the latency of every finished request in a t-digest
// under hrt.mu. When TDigest.Add fails it returns the error straight away,
// and the Unlock that follows the Add is never reached: the mutex stays
// write-locked. The next request through the hedged transport first asks
// hedgedhttp for the hedging delay, and hedgedhttp calls the nextFn method
// value, which read-locks hrt.mu to read the quantile. Every later bucket
// request blocks there forever.
//
// The fix unlocks right after the Add and only then checks the error.
// The program builds the digest with its count already at the maximum so
// that the next Add reports the overflow error go-tdigest returns.
package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ---- github.com/caio/go-tdigest (reduced) ----

type TDigest struct {
	count uint64
	sum   float64
}

func newTDigest() *TDigest { return &TDigest{} }

func (t *TDigest) Add(value float64) error { return t.AddWeighted(value, 1) }

func (t *TDigest) AddWeighted(value float64, count uint64) error {
	if count == 0 || math.IsNaN(value) || math.IsInf(value, 0) {
		return fmt.Errorf("illegal datapoint <value: %.4f, count: %d>", value, count)
	}
	if t.count+count <= t.count {
		return fmt.Errorf("overflow: adding %d to %d would overflow", count, t.count)
	}
	t.count += count
	t.sum += value * float64(count)
	return nil
}

func (t *TDigest) Quantile(q float64) float64 {
	if t.count == 0 {
		return 0
	}
	return t.sum / float64(t.count) * (1 + q)
}

// ---- github.com/cristalhq/hedgedhttp (reduced) ----

type hedgedConfig struct {
	Transport http.RoundTripper
	Upto      int
	Next      func() (upto int, delay time.Duration)
}

type hedgedTransport struct {
	rt   http.RoundTripper
	next func() (int, time.Duration)
}

func newHedged(cfg hedgedConfig) (http.RoundTripper, error) {
	if cfg.Transport == nil {
		return nil, errors.New("hedgedhttp: nil transport")
	}
	return &hedgedTransport{rt: cfg.Transport, next: cfg.Next}, nil
}

func (ht *hedgedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	upto, delay := ht.next()
	_ = upto
	_ = delay // only the first attempt is needed here
	return ht.rt.RoundTrip(req)
}

// ---- pkg/exthttp/hedging.go ----

type HedgingConfig struct {
	UpTo     uint
	Quantile float64
}

type hedgingRoundTripper struct {
	Transport http.RoundTripper
	TDigest   *TDigest
	mu        sync.RWMutex
	config    HedgingConfig
}

func (hrt *hedgingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := hrt.Transport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	duration := float64(time.Since(start).Milliseconds())
	hrt.mu.Lock()
	err = hrt.TDigest.Add(duration)
	hrt.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return resp, err
}

func (hrt *hedgingRoundTripper) nextFn() (int, time.Duration) {
	hrt.mu.RLock()
	defer hrt.mu.RUnlock()

	delayMs := hrt.TDigest.Quantile(hrt.config.Quantile)
	delay := time.Duration(delayMs) * time.Millisecond
	upto := int(hrt.config.UpTo)
	return upto, delay
}

func hedgedTransportFor(hrt *hedgingRoundTripper, config HedgingConfig) http.RoundTripper {
	hedgedrt, err := newHedged(hedgedConfig{
		Transport: hrt,
		Upto:      int(config.UpTo),
		Next:      hrt.nextFn,
	})
	if err != nil {
		panic(fmt.Sprintf("BUG: Failed to create hedged transport: %v", err))
	}
	return hedgedrt
}

func CreateHedgedTransportWithConfig(config HedgingConfig) func(rt http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		hrt := &hedgingRoundTripper{Transport: rt, TDigest: newTDigest(), config: config}
		return hedgedTransportFor(hrt, config)
	}
}

// bucketBackend stands in for the object store HTTP endpoint.
type bucketBackend struct{}

func (bucketBackend) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("chunk")), Request: req}, nil
}

func main() {
	cfg := HedgingConfig{UpTo: 3, Quantile: 0.9}
	_ = CreateHedgedTransportWithConfig(cfg) // the normal constructor

	// A digest that has seen so many samples that the next Add overflows.
	td := newTDigest()
	td.count = math.MaxUint64
	hrt := &hedgingRoundTripper{Transport: bucketBackend{}, TDigest: td, config: cfg}
	client := &http.Client{Transport: hedgedTransportFor(hrt, cfg)}

	for i := 0; i < 2; i++ {
		resp, err := client.Get("http://bucket.local/01HXYZ/chunks/000001")
		if err != nil {
			fmt.Println("get:", err)
			continue
		}
		resp.Body.Close()
		fmt.Println("get: ok")
	}
}
