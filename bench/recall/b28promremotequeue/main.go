// Project: prometheus/prometheus (storage/remote/queue_manager.go, v2.33.x)
// Bug:     issue #10264 "Remote write stop sending samples"; fixed by PR #10395
// "Fix deadlock between adding to queue and getting batch" (v2.33.5).
//
// The WAL watcher feeds samples through QueueManager.Append -> shards.enqueue ->
// queue.Append, which holds queue.batchMtx and, once the partial batch is full,
// does a blocking send into batchQueue. The only reader of batchQueue is the
// shard's runShard loop; when its batch_send_deadline timer fires it calls
// queue.Batch(), which needs batchMtx to grab the partial batch. If the timer
// path is taken while batchQueue is full, Append holds batchMtx waiting for the
// reader and the reader waits for batchMtx: remote write stops for good.
// Deadlocking wait: the send to batchQueue in queue.Append, made while holding
// batchMtx (the reader is stuck in q.batchMtx.Lock() in queue.Batch).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type sampleOrExemplar struct {
	seriesLabels string
	value        float64
}

type queue struct {
	batchMtx   sync.Mutex
	batch      []sampleOrExemplar
	batchQueue chan []sampleOrExemplar
}

func newQueue(batchSize, capacity int) *queue {
	batches := capacity / batchSize
	if batches == 0 {
		batches = 1
	}
	return &queue{batch: make([]sampleOrExemplar, 0, batchSize), batchQueue: make(chan []sampleOrExemplar, batches)}
}

// Append queues a sample to be sent to the remote storage.
func (q *queue) Append(datum sampleOrExemplar, stop <-chan struct{}) bool {
	q.batchMtx.Lock()
	defer q.batchMtx.Unlock()
	q.batch = append(q.batch, datum)
	if len(q.batch) == cap(q.batch) {
		select {
		case q.batchQueue <- q.batch: // blocks with batchMtx held while batchQueue is full
			q.batch = make([]sampleOrExemplar, 0, cap(q.batch))
			return true
		case <-stop:
			return false // No need to return batch to pool, we are stopping
		}
	}
	return true
}

func (q *queue) Chan() <-chan []sampleOrExemplar { return q.batchQueue }

// Batch returns the current batch and allocates a new batch.
func (q *queue) Batch() []sampleOrExemplar {
	q.batchMtx.Lock() // held by Append, which waits for this goroutine to drain batchQueue
	defer q.batchMtx.Unlock()
	select {
	case batch := <-q.batchQueue:
		return batch
	default:
		batch := q.batch
		q.batch = make([]sampleOrExemplar, 0, cap(batch))
		return batch
	}
}

type shards struct {
	mtx          sync.RWMutex // With the WAL, this is never actually contended.
	queues       []*queue
	softShutdown chan struct{}
	sent         int
}

func (s *shards) enqueue(ref uint64, data sampleOrExemplar) bool {
	s.mtx.RLock()
	defer s.mtx.RUnlock()
	select {
	case <-s.softShutdown:
		return false
	default:
		return s.queues[ref%uint64(len(s.queues))].Append(data, s.softShutdown)
	}
}

func (s *shards) sendSamples(ctx context.Context, batch []sampleOrExemplar) { s.sent += len(batch) }

func (s *shards) runShard(ctx context.Context, q *queue, batchSendDeadline time.Duration) {
	batchQueue := q.Chan()
	timer := time.NewTimer(batchSendDeadline)
	for {
		select {
		case <-ctx.Done():
			return
		case batch := <-batchQueue:
			s.sendSamples(ctx, batch)
			timer.Reset(batchSendDeadline)
		case <-timer.C:
			time.Sleep(20 * time.Millisecond) // shard goroutine descheduled: the race window, widened
			if batch := q.Batch(); len(batch) > 0 {
				s.sendSamples(ctx, batch)
			}
			timer.Reset(batchSendDeadline)
		}
	}
}

type QueueManager struct{ shards *shards }

// Append queues samples read from the WAL; it retries with backoff until enqueued.
func (t *QueueManager) Append(refs []uint64) bool {
	for i, ref := range refs {
		for !t.shards.enqueue(ref, sampleOrExemplar{seriesLabels: "up", value: float64(i)}) {
			time.Sleep(5 * time.Millisecond) // backoff; enqueueRetriesTotal.Inc()
		}
	}
	return true
}

func main() {
	q := newQueue(2, 2) // max_samples_per_send: 2, capacity: 2 -> batchQueue holds one batch
	s := &shards{queues: []*queue{q}, softShutdown: make(chan struct{})}
	qm := &QueueManager{shards: s}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.runShard(ctx, q, 10*time.Millisecond) // batch_send_deadline

	time.Sleep(15 * time.Millisecond) // the deadline fired on an idle shard
	done := make(chan bool)
	go func() { done <- qm.Append([]uint64{0, 0, 0, 0, 0}) }() // WAL watcher
	<-done
	fmt.Println("all samples enqueued")
}
