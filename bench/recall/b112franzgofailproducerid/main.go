// Project: twmb/franz-go (pkg/kgo/producer.go producerID, resetAllProducerSequences and failProducerID; pkg/kgo/sink.go handleReqRespBatch), v1.13.0, fixed in v1.13.1 (March 2023).
// Bug: producerID() holds producer.idMu while it bumps the idempotent epoch and resets the sequence numbers of every partition, locking each recBuf.mu, while a sink that handles an OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID batch response holds that partition's recBuf.mu and calls failProducerID, which locks idMu; when a topic is deleted and quickly recreated both happen at once and the two goroutines deadlock (issue #403, PR #404 "producer: avoid deadlock when quickly recreating a topic", which makes failProducerID lock free with a CompareAndSwap loop).
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	errOutOfOrderSequenceNumber = errors.New("OUT_OF_ORDER_SEQUENCE_NUMBER")
	errReloadProducerID         = errors.New("producer id needs reloading")
)

type producerID struct {
	id    int64
	epoch int16
	err   error
}

type recBatch struct {
	owner   *recBuf
	records int
}

// recBuf buffers records for one partition; mu guards the sequence state.
type recBuf struct {
	mu           sync.Mutex
	topic        string
	partition    int32
	seq          int32
	needSeqReset bool
	batches      []*recBatch
}

type topicPartition struct{ records *recBuf }

type topicPartitions struct{ partitions []*topicPartition }

type producer struct {
	idMu   sync.Mutex
	id     atomic.Value // *producerID
	topics map[string]*topicPartitions
}

type Client struct {
	producer producer
	log      func(string, ...any)
}

func (cl *Client) producerID() (int64, int16, error) {
	p := &cl.producer
	id := p.id.Load().(*producerID)
	if errors.Is(id.err, errReloadProducerID) {
		p.idMu.Lock()
		defer p.idMu.Unlock()
		if id = p.id.Load().(*producerID); errors.Is(id.err, errReloadProducerID) {
			// KIP-360: bump the epoch locally, reset all sequence numbers.
			cl.resetAllProducerSequences()
			id = &producerID{id: id.id, epoch: id.epoch + 1}
			p.id.Store(id)
		}
	}
	return id.id, id.epoch, id.err
}

func (cl *Client) resetAllProducerSequences() {
	for _, tp := range cl.producer.topics {
		for _, p := range tp.partitions {
			p.records.mu.Lock()
			p.records.needSeqReset = true
			p.records.mu.Unlock()
		}
	}
}

func (cl *Client) failProducerID(id int64, epoch int16, err error) {
	p := &cl.producer
	p.idMu.Lock()
	defer p.idMu.Unlock()

	current := p.id.Load().(*producerID)
	if current.id != id || current.epoch != epoch {
		cl.log("ignoring a fail producer id request due to current id being different")
		return
	}
	p.id.Store(&producerID{id: id, epoch: epoch, err: err})
}

type sink struct {
	cl     *Client
	nodeID int32
}

// handleReqRespBatch runs with the batch owner's recBuf mutex held.
func (s *sink) handleReqRespBatch(batch *recBatch, errCode error, producerID int64, producerEpoch int16) (retry bool) {
	batch.owner.mu.Lock()
	defer batch.owner.mu.Unlock()

	switch {
	case errors.Is(errCode, errOutOfOrderSequenceNumber):
		s.cl.log("batch errored, failing the producer ID and resetting all sequence numbers",
			"broker", s.nodeID, "topic", batch.owner.topic, "partition", batch.owner.partition)
		time.Sleep(50 * time.Millisecond) // response decoding and logging for the rest of the request
		s.cl.failProducerID(producerID, producerEpoch, errReloadProducerID)
		return true
	default:
		batch.owner.seq += int32(batch.records)
		return false
	}
}

// produce starts a new produce request for this sink's partitions.
func (s *sink) produce() {
	id, epoch, err := s.cl.producerID()
	s.cl.log("sink produce", "broker", s.nodeID, "id", id, "epoch", epoch, "err", err)
}

func main() {
	p0 := &recBuf{topic: "orders", partition: 0}
	p1 := &recBuf{topic: "orders", partition: 1}
	cl := &Client{log: func(string, ...any) {}}
	cl.producer.topics = map[string]*topicPartitions{
		"orders": {partitions: []*topicPartition{{records: p0}, {records: p1}}},
	}
	cl.producer.id.Store(&producerID{id: 7, epoch: 0})

	sink1 := &sink{cl: cl, nodeID: 1} // leader of partition 0
	sink2 := &sink{cl: cl, nodeID: 2} // leader of partition 1

	// The topic was recreated: partition 1 already failed the producer ID.
	sink2.handleReqRespBatch(&recBatch{owner: p1, records: 3}, errOutOfOrderSequenceNumber, 7, 0)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // sink 1 handles the same error for partition 0
		defer wg.Done()
		sink1.handleReqRespBatch(&recBatch{owner: p0, records: 5}, errOutOfOrderSequenceNumber, 7, 0)
	}()
	go func() { // sink 2 starts its next request and reloads the ID
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		sink2.produce()
	}()
	wg.Wait()
	id := cl.producer.id.Load().(*producerID)
	fmt.Println("producer id", id.id, "epoch", id.epoch, "err", id.err)
}
