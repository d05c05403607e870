// Project: apache/pulsar-client-go (pulsar/internal/blocking_queue.go)
// Bug: (reconstruction) blockingQueue builds its condition variables with
//      sync.NewCond(&bq.mutex). The batch-drain helper used by the producer's
//      pending-queue flusher locked bq.isNotEmpty.L -- which is bq.mutex -- and then
//      called the public bq.Size() to bound the batch; Size() locks bq.mutex again
//      and the producer event loop hangs forever.
// Fix: read the unexported size field while the condition lock is held.

package pulsarqueue

import (
	"sync"
	"testing"
	"time"
)

// BlockingQueue is a bounded FIFO queue.
type BlockingQueue interface {
	Put(item interface{})
	Take() interface{}
	TakeBatch(max int) []interface{}
	Poll() (interface{}, bool)
	Peek() (interface{}, bool)
	Size() int
}

type blockingQueue struct {
	items   []interface{}
	headIdx int
	tailIdx int
	size    int
	maxSize int

	mutex      sync.Mutex
	isNotEmpty *sync.Cond
	isNotFull  *sync.Cond
}

func NewBlockingQueue(maxSize int) BlockingQueue {
	bq := &blockingQueue{items: make([]interface{}, maxSize), maxSize: maxSize}
	bq.isNotEmpty = sync.NewCond(&bq.mutex)
	bq.isNotFull = sync.NewCond(&bq.mutex)
	return bq
}

func (bq *blockingQueue) Put(item interface{}) {
	bq.mutex.Lock()
	defer bq.mutex.Unlock()
	for bq.size == bq.maxSize {
		bq.isNotFull.Wait()
	}
	bq.items[bq.tailIdx] = item
	bq.tailIdx = (bq.tailIdx + 1) % bq.maxSize
	bq.size++
	bq.isNotEmpty.Signal()
}

func (bq *blockingQueue) Take() interface{} {
	bq.mutex.Lock()
	defer bq.mutex.Unlock()
	for bq.size == 0 {
		bq.isNotEmpty.Wait()
	}
	return bq.dequeue()
}

// TakeBatch waits for at least one item and returns up to max items.
func (bq *blockingQueue) TakeBatch(max int) []interface{} {
	bq.isNotEmpty.L.Lock()
	defer bq.isNotEmpty.L.Unlock()
	for bq.size == 0 {
		bq.isNotEmpty.Wait()
	}
	n := bq.Size()
	if n > max {
		n = max
	}
	batch := make([]interface{}, 0, n)
	for i := 0; i < n; i++ {
		batch = append(batch, bq.dequeue())
	}
	return batch
}

func (bq *blockingQueue) Poll() (interface{}, bool) {
	bq.mutex.Lock()
	defer bq.mutex.Unlock()
	if bq.size == 0 {
		return nil, false
	}
	return bq.dequeue(), true
}

func (bq *blockingQueue) Peek() (interface{}, bool) {
	bq.mutex.Lock()
	defer bq.mutex.Unlock()
	if bq.size == 0 {
		return nil, false
	}
	return bq.items[bq.headIdx], true
}

func (bq *blockingQueue) Size() int {
	bq.mutex.Lock()
	defer bq.mutex.Unlock()
	return bq.size
}

// dequeue must be called with bq.mutex held.
func (bq *blockingQueue) dequeue() interface{} {
	item := bq.items[bq.headIdx]
	bq.items[bq.headIdx] = nil
	bq.headIdx = (bq.headIdx + 1) % bq.maxSize
	bq.size--
	bq.isNotFull.Signal()
	return item
}

type pendingItem struct {
	sequenceID uint64
	sentAt     time.Time
	callback   func(sequenceID uint64, err error)
}

type partitionProducer struct {
	topic        string
	producerID   uint64
	pendingQueue BlockingQueue
	lastSequence uint64
}

// ackReceived completes the pending sends acknowledged by the broker.
func (p *partitionProducer) ackReceived(upTo uint64) int {
	acked := 0
	for acked < int(upTo) {
		for _, it := range p.pendingQueue.TakeBatch(16) {
			pi := it.(*pendingItem)
			pi.callback(pi.sequenceID, nil)
			acked++
		}
	}
	return acked
}

func TestProducerAckDrainsPendingQueue(t *testing.T) {
	p := &partitionProducer{topic: "persistent://public/default/orders", producerID: 7,
		pendingQueue: NewBlockingQueue(64)}
	var acks int
	for i := uint64(1); i <= 3; i++ {
		p.pendingQueue.Put(&pendingItem{sequenceID: i, sentAt: time.Now(),
			callback: func(uint64, error) { acks++ }})
	}
	done := make(chan int)
	go func() { done <- p.ackReceived(3) }() // connection read loop
	if n := <-done; n != 3 || acks != 3 {
		t.Fatalf("acked %d, callbacks %d", n, acks)
	}
}
