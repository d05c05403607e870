// Modelled on franz-go's recBuf/sink split: onBatchErr is called by the sink
// WITHOUT r.mu and takes r.mu only for retryable errors (after the
// `if !isRetryable(err) { return }` guard). migrate holds r.mu and calls the
// lock-free requeueLocked variant directly.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	errNotLeader     = errors.New("NOT_LEADER_FOR_PARTITION")
	errLeaderChanged = errors.New("partition moved to a new sink")
	errTooLarge      = errors.New("MESSAGE_TOO_LARGE")
)

const maxAttempts = 4

func isRetryable(err error) bool {
	return errors.Is(err, errNotLeader) || errors.Is(err, errLeaderChanged)
}

type batch struct {
	recs     []string
	attempts int
}

type recBuf struct {
	mu        sync.Mutex
	batches   []*batch
	sinkID    int
	delivered atomic.Int64
	failed    atomic.Int64
}

func (r *recBuf) buffer(rec string) {
	r.mu.Lock()
	r.batches = append(r.batches, &batch{recs: []string{rec}})
	r.mu.Unlock()
}

func (r *recBuf) take() *batch {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.batches) == 0 {
		return nil
	}
	b := r.batches[0]
	r.batches = r.batches[1:]
	return b
}

// requeueLocked puts b back at the head, or fails it after maxAttempts.
// Caller must hold r.mu.
func (r *recBuf) requeueLocked(b *batch, err error) {
	b.attempts++
	if b.attempts >= maxAttempts {
		r.failed.Add(int64(len(b.recs)))
		return
	}
	r.batches = append([]*batch{b}, r.batches...)
}

// onBatchErr must be called WITHOUT r.mu (only the sink loop calls it).
func (r *recBuf) onBatchErr(b *batch, err error) {
	if !isRetryable(err) {
		r.failed.Add(int64(len(b.recs))) // promise fails; no buffer state touched
		return
	}
	r.mu.Lock()
	r.requeueLocked(b, err)
	r.mu.Unlock()
}

// migrate holds r.mu and uses requeueLocked, never onBatchErr.
func (r *recBuf) migrate(inflight []*batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sinkID++
	for i := len(inflight) - 1; i >= 0; i-- {
		r.requeueLocked(inflight[i], errLeaderChanged)
	}
}

func (r *recBuf) sinkLoop(total int64) {
	for i := 0; r.delivered.Load()+r.failed.Load() < total; i++ {
		b := r.take()
		if b == nil {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		switch {
		case i%11 == 5:
			r.migrate([]*batch{b})
		case i%13 == 7:
			r.onBatchErr(b, errTooLarge)
		case i%3 == 1:
			r.onBatchErr(b, fmt.Errorf("produce: %w", errNotLeader))
		default:
			r.delivered.Add(int64(len(b.recs)))
		}
	}
}

func main() {
	const producers, perProducer = 4, 100
	r := &recBuf{}
	done := make(chan struct{})
	go func() { r.sinkLoop(producers * perProducer); close(done) }()
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < perProducer; i++ {
				r.buffer(fmt.Sprintf("p%d-r%d", p, i))
			}
		}(p)
	}
	wg.Wait()
	<-done
	r.mu.Lock()
	fmt.Printf("delivered=%d failed=%d sinkMoves=%d left=%d\n",
		r.delivered.Load(), r.failed.Load(), r.sinkID, len(r.batches))
	r.mu.Unlock()
}
