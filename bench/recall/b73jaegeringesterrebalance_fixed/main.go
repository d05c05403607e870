// Project: jaegertracing/jaeger (cmd/ingester/app/consumer/consumer.go), v1.8/v1.9, late 2018 (approximate).
// Bug: when a partition is reassigned, Consumer.Start holds partitionMapLock while it waits on the previous consumerState's WaitGroup, but the previous handleMessages goroutine marks itself done only from its deferred cleanup after taking partitionMapLock (to update partitionsHeld and find its state), so a rebalance that revokes and re-adds a partition while a message is being processed deadlocks the ingester. The fix grabs the WaitGroup up front and calls wg.Done before taking the lock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type ConsumerMessage struct {
	Topic     string
	Partition int32
	Offset    int64
	Value     []byte
}

type ConsumerError struct {
	Partition int32
	Err       error
}

// PartitionConsumer mirrors sarama-cluster's PartitionConsumer.
type PartitionConsumer interface {
	Partition() int32
	Messages() <-chan *ConsumerMessage
	Errors() <-chan *ConsumerError
	Close() error
}

// internalConsumer mirrors the sarama-cluster Consumer used by the ingester.
type internalConsumer interface {
	Partitions() <-chan PartitionConsumer
	Close() error
}

type SpanProcessor interface {
	Process(msg *ConsumerMessage) error
	Close() error
}

type ProcessorFactory interface {
	new(partition int32, minOffset int64) SpanProcessor
}

type consumerState struct {
	wg                sync.WaitGroup
	partitionConsumer PartitionConsumer
}

// Consumer uses sarama to consume and handle messages from kafka.
type Consumer struct {
	internalConsumer   internalConsumer
	processorFactory   ProcessorFactory
	partitionIDToState map[int32]*consumerState
	partitionMapLock   sync.Mutex
	partitionsHeld     int64
}

// Start begins consuming messages in a go routine.
func (c *Consumer) Start() {
	go func() {
		for pc := range c.internalConsumer.Partitions() {
			c.partitionMapLock.Lock()
			if p, ok := c.partitionIDToState[pc.Partition()]; ok {
				// This is a guard against simultaneously draining messages
				// from the last time the partition was assigned and
				// processing new messages for the same partition, which may lead
				// to the cleanup process not completing.
				p.wg.Wait()
			}
			c.partitionIDToState[pc.Partition()] = &consumerState{partitionConsumer: pc}
			c.partitionIDToState[pc.Partition()].wg.Add(2)
			c.partitionMapLock.Unlock()
			go c.handleMessages(pc)
			go c.handleErrors(pc.Partition(), pc.Errors())
		}
	}()
}

// Close closes the Consumer and underlying sarama consumer.
func (c *Consumer) Close() error {
	c.partitionMapLock.Lock()
	for _, p := range c.partitionIDToState {
		c.closePartition(p.partitionConsumer)
		p.wg.Wait()
	}
	c.partitionMapLock.Unlock()
	return c.internalConsumer.Close()
}

func (c *Consumer) handleMessages(pc PartitionConsumer) {
	c.partitionMapLock.Lock()
	c.partitionsHeld++
	wg := &c.partitionIDToState[pc.Partition()].wg
	c.partitionMapLock.Unlock()
	defer func() {
		c.closePartition(pc)
		wg.Done()
		c.partitionMapLock.Lock()
		c.partitionsHeld--
		c.partitionMapLock.Unlock()
	}()

	msgProcessor := c.processorFactory.new(pc.Partition(), 0)
	defer msgProcessor.Close()
	for msg := range pc.Messages() {
		if err := msgProcessor.Process(msg); err != nil {
			fmt.Println("failed to process message:", err)
		}
	}
}

func (c *Consumer) handleErrors(partition int32, errChan <-chan *ConsumerError) {
	c.partitionMapLock.Lock()
	wg := &c.partitionIDToState[partition].wg
	c.partitionMapLock.Unlock()
	defer wg.Done()
	for err := range errChan {
		fmt.Println("Error consuming from Kafka:", err.Err)
	}
}

func (c *Consumer) closePartition(partitionConsumer PartitionConsumer) {
	_ = partitionConsumer.Close() // blocks until messages channel is drained
}

// fake sarama-cluster objects

type fakePartitionConsumer struct {
	partition int32
	msgs      chan *ConsumerMessage
	errs      chan *ConsumerError
	once      sync.Once
}

func newFakePC(p int32) *fakePartitionConsumer {
	return &fakePartitionConsumer{partition: p, msgs: make(chan *ConsumerMessage, 16), errs: make(chan *ConsumerError, 16)}
}
func (f *fakePartitionConsumer) Partition() int32                  { return f.partition }
func (f *fakePartitionConsumer) Messages() <-chan *ConsumerMessage { return f.msgs }
func (f *fakePartitionConsumer) Errors() <-chan *ConsumerError     { return f.errs }
func (f *fakePartitionConsumer) Close() error {
	f.once.Do(func() { close(f.msgs); close(f.errs) })
	return nil
}

type fakeClusterConsumer struct{ partitions chan PartitionConsumer }

func (f *fakeClusterConsumer) Partitions() <-chan PartitionConsumer { return f.partitions }
func (f *fakeClusterConsumer) Close() error                         { close(f.partitions); return nil }

type spanWriter struct{ partition int32 }

func (w *spanWriter) Process(msg *ConsumerMessage) error {
	time.Sleep(50 * time.Millisecond) // write the span to the storage backend
	return nil
}
func (w *spanWriter) Close() error { return nil }

type processorFactory struct{}

func (processorFactory) new(partition int32, minOffset int64) SpanProcessor {
	return &spanWriter{partition: partition}
}

func main() {
	cluster := &fakeClusterConsumer{partitions: make(chan PartitionConsumer)}
	c := &Consumer{internalConsumer: cluster, processorFactory: processorFactory{}, partitionIDToState: map[int32]*consumerState{}}
	c.Start()

	old := newFakePC(0)
	cluster.partitions <- old
	old.msgs <- &ConsumerMessage{Topic: "jaeger-spans", Partition: 0, Offset: 1, Value: []byte("span")}
	time.Sleep(10 * time.Millisecond)

	// Rebalance: partition 0 is revoked and immediately assigned back.
	old.Close()
	cluster.partitions <- newFakePC(0)

	time.Sleep(100 * time.Millisecond)
	if err := c.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("ingester consumer closed")
}
