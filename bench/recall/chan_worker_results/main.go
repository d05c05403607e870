// Pattern: kubernetes controllers / errgroup-style fan-in, e.g.
// "errCh := make(chan error, workers)" where each of a fixed number of
// workers reports exactly one result. Here each worker reports its result
// while holding the shared stats mutex; the collector goroutine also takes
// that mutex between receives.
//
// Why it is safe: exactly numWorkers sends happen in total and the channel
// capacity is numWorkers, so no send can ever block, even with mu held.
package main

import (
	"fmt"
	"sync"
	"time"
)

const numWorkers = 4

type result struct {
	worker int
	synced int
	err    error
}

type syncStats struct {
	mu        sync.Mutex
	processed int
	failures  int
}

// syncShard processes one shard and reports its single result.
func syncShard(id int, stats *syncStats, results chan<- result) {
	n := (id + 1) * 10
	time.Sleep(time.Duration(id) * time.Millisecond)

	stats.mu.Lock()
	stats.processed += n
	var err error
	if id == 2 {
		stats.failures++
		err = fmt.Errorf("shard %d: conflict", id)
	}
	// Sent with the lock held: at most numWorkers sends, capacity numWorkers.
	results <- result{worker: id, synced: n, err: err}
	stats.mu.Unlock()
}

func main() {
	stats := &syncStats{}
	results := make(chan result, numWorkers)
	done := make(chan struct{})

	go func() {
		defer close(done)
		var errs []error
		for i := 0; i < numWorkers; i++ {
			r := <-results
			if r.err != nil {
				errs = append(errs, r.err)
			}
			// Peek at the running totals between receives.
			stats.mu.Lock()
			fmt.Printf("worker %d done (%d items), running total %d\n", r.worker, r.synced, stats.processed)
			stats.mu.Unlock()
		}
		stats.mu.Lock()
		fmt.Printf("all workers done: processed=%d failures=%d errs=%v\n", stats.processed, stats.failures, errs)
		stats.mu.Unlock()
	}()

	for i := 0; i < numWorkers; i++ {
		go syncShard(i, stats, results)
	}
	<-done
}
