// Style: like datadog-go statsd aggregator / a periodic metrics flusher. The
// ticker-driven flush uses TryLock on flushMu and simply skips the round if a
// flush is already in flight; the final flush on shutdown uses Lock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type aggregator struct {
	mu       sync.Mutex // guards counts
	counts   map[string]int64
	flushMu  sync.Mutex // serialises flushes
	flushed  int64      // guarded by flushMu
	skipped  atomic.Int64
	sinkSize atomic.Int64
}

func (a *aggregator) Incr(name string, v int64) {
	a.mu.Lock()
	a.counts[name] += v
	a.mu.Unlock()
}

func (a *aggregator) swap() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.counts
	a.counts = make(map[string]int64)
	return c
}

func (a *aggregator) flushLocked() {
	batch := a.swap()
	time.Sleep(2 * time.Millisecond) // send over UDP
	for _, v := range batch {
		a.flushed += v
	}
	a.sinkSize.Add(int64(len(batch)))
}

// tryFlush is called from the ticker; overlapping flushes are skipped.
func (a *aggregator) tryFlush() {
	if !a.flushMu.TryLock() {
		a.skipped.Add(1)
		return
	}
	defer a.flushMu.Unlock()
	a.flushLocked()
}

func (a *aggregator) Close() int64 {
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	a.flushLocked()
	return a.flushed
}

func main() {
	a := &aggregator{counts: make(map[string]int64)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for f := 0; f < 2; f++ { // two tickers racing, as after a config reload
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					a.tryFlush()
				case <-stop:
					return
				}
			}
		}()
	}
	for i := 0; i < 2000; i++ {
		a.Incr(fmt.Sprintf("req.%d", i%5), 1)
		if i%200 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	fmt.Println("flushed:", a.Close(), "skipped>=0:", a.skipped.Load() >= 0)
}
