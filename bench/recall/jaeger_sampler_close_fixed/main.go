// Project: Jaeger (jaeger-client-go), component: RemotelyControlledSampler (sampler_remote.go).
// Bug (as remembered): Close() took the sampler's embedded RWMutex write lock
// and, while holding it, handed a WaitGroup to the polling goroutine over the
// unbuffered doneChan and waited for it. The polling goroutine
// (pollController) may be inside updateSampler(), which takes s.Lock() to swap
// the sampler in place; it can then never get back to the select that receives
// from doneChan -> tracer.Close() hung forever. The fix made Close() use an
// atomic "closed" flag and not hold the mutex while stopping the poller.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type Sampler interface {
	IsSampled(traceID uint64) bool
	Close()
}

type ProbabilisticSampler struct{ rate float64 }

func (s *ProbabilisticSampler) IsSampled(id uint64) bool { return float64(id%100)/100 < s.rate }
func (s *ProbabilisticSampler) Close()                   {}

type SamplingStrategyFetcher interface {
	Fetch(serviceName string) (float64, error)
}

type httpSamplingStrategyFetcher struct{ n atomic.Int64 }

func (f *httpSamplingStrategyFetcher) Fetch(string) (float64, error) {
	return float64(f.n.Add(1)%10) / 10, nil
}

type RemotelyControlledSampler struct {
	sync.RWMutex
	closed int64 // atomic

	serviceName     string
	sampler         Sampler
	fetcher         SamplingStrategyFetcher
	samplingRefresh time.Duration
	doneChan        chan *sync.WaitGroup
}

func NewRemotelyControlledSampler(service string, refresh time.Duration) *RemotelyControlledSampler {
	s := &RemotelyControlledSampler{
		serviceName:     service,
		sampler:         &ProbabilisticSampler{rate: 0.001},
		fetcher:         &httpSamplingStrategyFetcher{},
		samplingRefresh: refresh,
		doneChan:        make(chan *sync.WaitGroup),
	}
	go s.pollController()
	return s
}

func (s *RemotelyControlledSampler) IsSampled(id uint64) bool {
	s.RLock()
	defer s.RUnlock()
	return s.sampler.IsSampled(id)
}

func (s *RemotelyControlledSampler) Close() {
	// Fix: do not hold the mutex while stopping the poller; guard with an atomic flag.
	if swapped := atomic.CompareAndSwapInt64(&s.closed, 0, 1); !swapped {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	s.doneChan <- &wg
	wg.Wait()
}

func (s *RemotelyControlledSampler) pollController() {
	ticker := time.NewTicker(s.samplingRefresh)
	defer ticker.Stop()
	s.pollControllerWithTicker(ticker)
}

func (s *RemotelyControlledSampler) pollControllerWithTicker(ticker *time.Ticker) {
	for {
		select {
		case <-ticker.C:
			s.updateSampler()
		case wg := <-s.doneChan:
			wg.Done()
			return
		}
	}
}

func (s *RemotelyControlledSampler) updateSampler() {
	rate, err := s.fetcher.Fetch(s.serviceName)
	if err != nil {
		return
	}
	s.Lock()
	defer s.Unlock()
	s.sampler.Close()
	s.sampler = &ProbabilisticSampler{rate: rate}
}

// ---- tracer ----

type Tracer struct {
	sampler Sampler
}

func (t *Tracer) StartSpan(id uint64) bool { return t.sampler.IsSampled(id) }
func (t *Tracer) Close()                   { t.sampler.Close() }

func main() {
	s := NewRemotelyControlledSampler("frontend", time.Millisecond)
	tracer := &Tracer{sampler: s}
	go func() {
		for i := uint64(0); i < 1000; i++ {
			tracer.StartSpan(i)
		}
	}()
	time.Sleep(5 * time.Millisecond)
	done := make(chan struct{})
	go func() { tracer.Close(); close(done) }()
	select {
	case <-done:
		fmt.Println("closed")
	case <-time.After(100 * time.Millisecond):
		fmt.Println("close timed out")
	}
}
