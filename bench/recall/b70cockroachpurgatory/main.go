// Command b70cockroachpurgatory reproduces a leaked-lock deadlock modelled
// on CockroachDB's replica queues (pkg/kv/kvserver/queue.go, baseQueue and
// its purgatory processing), no specific upstream bug.
//
// processReplicasInPurgatory retries the replicas parked in purgatory. The
// loop body takes bq.mu at the top, checks the item, and releases bq.mu at
// the bottom before processing the replica. Processing a replica whose
// store is draining disables the queue, and on the next iteration the loop
// notices bq.mu.disabled and breaks out, which skips the unlock at the
// bottom of the body. The purgatory goroutine exits with bq.mu still
// locked. When the store later asks the queue for its length (baseQueue.Len
// through Store.queueLengths) the main goroutine blocks on bq.mu forever.
//
// The fix releases bq.mu before leaving the loop.
package main

import (
	"container/heap"
	"errors"
	"fmt"
	"sync"
)

type RangeID int64

type replicaItem struct {
	rangeID    RangeID
	priority   float64
	index      int
	processing bool
}

type priorityQueue []*replicaItem

func (pq priorityQueue) Len() int           { return len(pq) }
func (pq priorityQueue) Less(i, j int) bool { return pq[i].priority > pq[j].priority }
func (pq priorityQueue) Swap(i, j int) {
	pq[i], pq[j] = pq[j], pq[i]
	pq[i].index, pq[j].index = i, j
}
func (pq *priorityQueue) Push(x interface{}) {
	item := x.(*replicaItem)
	item.index = len(*pq)
	*pq = append(*pq, item)
}
func (pq *priorityQueue) Pop() interface{} {
	old := *pq
	item := old[len(old)-1]
	*pq = old[:len(old)-1]
	return item
}

var errStoreDraining = errors.New("store is draining")

type queueImpl interface {
	process(rangeID RangeID) error
}

type baseQueue struct {
	name string
	impl queueImpl
	mu   struct {
		sync.Mutex
		replicas  map[RangeID]*replicaItem
		priorityQ priorityQueue
		purgatory map[RangeID]error
		disabled  bool
	}
	processed int
}

func newBaseQueue(name string, impl queueImpl) *baseQueue {
	bq := &baseQueue{name: name, impl: impl}
	bq.mu.replicas = map[RangeID]*replicaItem{}
	bq.mu.purgatory = map[RangeID]error{}
	return bq
}

func (bq *baseQueue) SetDisabled(disabled bool) {
	bq.mu.Lock()
	bq.mu.disabled = disabled
	bq.mu.Unlock()
}

func (bq *baseQueue) Len() int {
	bq.mu.Lock()
	defer bq.mu.Unlock()
	return bq.mu.priorityQ.Len()
}

func (bq *baseQueue) addToPurgatoryLocked(id RangeID, err error) {
	bq.mu.purgatory[id] = err
}

func (bq *baseQueue) processReplica(id RangeID) {
	if err := bq.impl.process(id); err != nil {
		if errors.Is(err, errStoreDraining) {
			bq.SetDisabled(true)
		}
		fmt.Printf("[%s] r%d: %v\n", bq.name, id, err)
		return
	}
	bq.processed++
}

func (bq *baseQueue) finishProcessing(id RangeID) {
	bq.mu.Lock()
	defer bq.mu.Unlock()
	delete(bq.mu.replicas, id)
}

func (bq *baseQueue) MaybeAdd(id RangeID, priority float64) {
	bq.mu.Lock()
	defer bq.mu.Unlock()
	if _, ok := bq.mu.replicas[id]; ok || bq.mu.disabled {
		return
	}
	item := &replicaItem{rangeID: id, priority: priority}
	bq.mu.replicas[id] = item
	heap.Push(&bq.mu.priorityQ, item)
}

func (bq *baseQueue) processReplicasInPurgatory(ids []RangeID) {
	for _, id := range ids {
		bq.mu.Lock()
		if bq.mu.disabled {
			break
		}
		if _, ok := bq.mu.purgatory[id]; !ok {
			bq.mu.Unlock()
			continue
		}
		delete(bq.mu.purgatory, id)
		bq.mu.replicas[id] = &replicaItem{rangeID: id, processing: true}
		bq.mu.Unlock()

		bq.processReplica(id)
		bq.finishProcessing(id)
	}
	fmt.Printf("[%s] purgatory pass done, processed=%d\n", bq.name, bq.processed)
}

type splitQueue struct {
	draining map[RangeID]bool
}

func (sq *splitQueue) process(id RangeID) error {
	if sq.draining[id] {
		return fmt.Errorf("split r%d: %w", id, errStoreDraining)
	}
	return nil
}

type Store struct {
	splitQueue *baseQueue
}

func (s *Store) queueLengths() map[string]int {
	return map[string]int{s.splitQueue.name: s.splitQueue.Len()}
}

func main() {
	s := &Store{splitQueue: newBaseQueue("split", &splitQueue{draining: map[RangeID]bool{12: true}})}
	bq := s.splitQueue
	bq.mu.Lock()
	for _, id := range []RangeID{7, 12, 31, 44} {
		bq.addToPurgatoryLocked(id, errors.New("split in progress"))
	}
	bq.mu.Unlock()
	bq.MaybeAdd(3, 0.5)
	bq.MaybeAdd(9, 2.0)

	done := make(chan struct{})
	go func() {
		defer close(done)
		bq.processReplicasInPurgatory([]RangeID{7, 12, 31, 44})
	}()
	<-done
	fmt.Println("queue lengths:", s.queueLengths())
}
