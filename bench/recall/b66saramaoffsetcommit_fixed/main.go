// Shape of sarama's offset manager: commits, coordinator handling and new partitions.
package main

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

var ErrNotCoordinatorForConsumer = errors.New("kafka server: request was for a consumer group that is not coordinated by this broker")

type Broker struct {
	lock      sync.Mutex
	connected bool
}

func (b *Broker) Open() error {
	b.lock.Lock()
	defer b.lock.Unlock()
	b.connected = true
	return nil
}

type Client interface {
	RefreshCoordinator(group string) error
	Coordinator(group string) (*Broker, error)
}

type client struct {
	lock         sync.RWMutex
	coordinators map[string]*Broker // cached per consumer group
}

func (c *client) RefreshCoordinator(group string) error { return nil }

func (c *client) Coordinator(group string) (*Broker, error) {
	c.lock.RLock()
	b := c.coordinators[group]
	c.lock.RUnlock()
	_ = b.Open() // as sarama does for a cached coordinator
	return b, nil
}

type partitionOffsetManager struct {
	lock      sync.Mutex
	partition int32
	offset    int64
	dirty     bool
	done      bool // set by AsyncClose
}

type offsetManager struct {
	client     Client
	group      string
	broker     *Broker
	brokerLock sync.RWMutex
	poms       map[string]map[int32]*partitionOffsetManager
	pomsLock   sync.RWMutex
}

func (om *offsetManager) coordinator() (*Broker, error) {
	om.brokerLock.RLock()
	broker := om.broker
	om.brokerLock.RUnlock()
	if broker != nil {
		return broker, nil
	}
	om.brokerLock.Lock()
	defer om.brokerLock.Unlock()
	if broker := om.broker; broker != nil {
		return broker, nil
	}
	if err := om.client.RefreshCoordinator(om.group); err != nil {
		return nil, err
	}
	broker, err := om.client.Coordinator(om.group)
	if err == nil {
		om.broker = broker
	}
	return broker, err
}

func (om *offsetManager) releaseCoordinator(b *Broker) {
	om.brokerLock.Lock()
	if om.broker == b {
		om.broker = nil
	}
	om.brokerLock.Unlock()
}

func (om *offsetManager) sortedPOMs() []*partitionOffsetManager {
	var list []*partitionOffsetManager
	for _, topicManagers := range om.poms {
		for _, pom := range topicManagers {
			list = append(list, pom)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].partition < list[j].partition })
	return list
}

func (om *offsetManager) constructRequest() map[int32]int64 {
	om.pomsLock.RLock()
	defer om.pomsLock.RUnlock()
	req := map[int32]int64{}
	for _, pom := range om.sortedPOMs() {
		pom.lock.Lock()
		if pom.dirty {
			req[pom.partition] = pom.offset
		}
		pom.lock.Unlock()
	}
	if len(req) == 0 {
		req = nil
	}
	return req
}

func (om *offsetManager) flushToBroker() {
	broker, err := om.coordinator()
	if err != nil {
		return // retried on the next tick
	}
	// Build the request before taking the broker lock, so broker.lock is never
	// held while waiting for pomsLock.
	req := om.constructRequest()
	if req == nil {
		return
	}
	broker.lock.Lock()
	time.Sleep(time.Millisecond) // OffsetCommitRequest round trip
	broker.lock.Unlock()
}

// handleResponse processes an OffsetCommitResponse whose blocks carry errors.
func (om *offsetManager) handleResponse(broker *Broker, errs map[int32]error) {
	om.pomsLock.RLock()
	defer om.pomsLock.RUnlock()
	for _, pom := range om.sortedPOMs() {
		time.Sleep(10 * time.Millisecond) // per-partition bookkeeping under pom.lock
		if errs[pom.partition] == ErrNotCoordinatorForConsumer {
			om.releaseCoordinator(broker)
		}
	}
}

func (om *offsetManager) releasePOMs(force bool) int {
	om.pomsLock.Lock()
	defer om.pomsLock.Unlock()
	remaining := 0
	for _, topicManagers := range om.poms {
		for p, pom := range topicManagers {
			if pom.done || force {
				delete(topicManagers, p)
			}
		}
		remaining += len(topicManagers)
	}
	return remaining
}

func (om *offsetManager) Commit() {
	om.flushToBroker()
	om.releasePOMs(false)
}

func (om *offsetManager) ManagePartition(topic string, partition int32) {
	_, _ = om.coordinator() // fetchInitialOffset asks the coordinator
	om.pomsLock.Lock()
	om.poms[topic][partition] = &partitionOffsetManager{partition: partition}
	om.pomsLock.Unlock()
}

func main() {
	b := &Broker{connected: true}
	c := &client{coordinators: map[string]*Broker{"billing": b}}
	om := &offsetManager{client: c, group: "billing", broker: b, poms: map[string]map[int32]*partitionOffsetManager{
		"invoices": {0: {partition: 0, offset: 41, dirty: true}, 1: {partition: 1, offset: 7, dirty: true}},
	}}
	var wg sync.WaitGroup
	wg.Add(4)
	errs := map[int32]error{0: ErrNotCoordinatorForConsumer, 1: ErrNotCoordinatorForConsumer}
	go func() { defer wg.Done(); om.handleResponse(b, errs) }()                                           // C
	go func() { defer wg.Done(); time.Sleep(3 * time.Millisecond); om.Commit() }()                        // B (explicit Commit)
	go func() { defer wg.Done(); time.Sleep(6 * time.Millisecond); om.flushToBroker() }()                 // A (auto-commit tick)
	go func() { defer wg.Done(); time.Sleep(14 * time.Millisecond); om.ManagePartition("invoices", 2) }() // D
	wg.Wait()
	fmt.Println("committed; partitions managed:", len(om.poms["invoices"]))
}
