// Project: Shopify/sarama (client.go: client.Close, backgroundMetadataUpdater, tryRefreshMetadata, updateMetadata), 2015 (approximate).
// Bug: client.Close took client.lock and only then signalled the background metadata updater and waited for it to exit, but an updater that is in the middle of a metadata refresh needs client.lock in updateMetadata before it can notice the closer, so Close and the updater deadlock. The fix shuts down and waits for the background goroutine before taking the lock.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type none struct{}

var ErrClosedClient = errors.New("kafka: tried to use a client that was closed")

type Config struct {
	Metadata struct {
		Retry struct {
			Max     int
			Backoff time.Duration
		}
		RefreshFrequency time.Duration
	}
}

type PartitionMetadata struct {
	ID       int32
	Leader   int32
	Replicas []int32
}
type TopicMetadata struct {
	Name       string
	Partitions []*PartitionMetadata
}
type MetadataRequest struct{ Topics []string }
type MetadataResponse struct {
	Brokers []*Broker
	Topics  []*TopicMetadata
}

// brokerConn is the wire to one Kafka broker.
type brokerConn interface {
	roundTrip(req *MetadataRequest) (*MetadataResponse, error)
}

type Broker struct {
	id   int32
	addr string
	lock sync.Mutex
	conn brokerConn
}

func (b *Broker) ID() int32 { return b.id }

func (b *Broker) GetMetadata(req *MetadataRequest) (*MetadataResponse, error) {
	b.lock.Lock()
	defer b.lock.Unlock()
	return b.conn.roundTrip(req)
}

func (b *Broker) Close() error { return nil }

type client struct {
	conf        *Config
	closer      chan none
	closed      chan none
	seedBrokers []*Broker
	brokers     map[int32]*Broker
	metadata    map[string]map[int32]*PartitionMetadata
	lock        sync.RWMutex // protects access to the maps that hold cluster state.
}

func NewClient(seeds []*Broker, conf *Config) (*client, error) {
	c := &client{
		conf:        conf,
		closer:      make(chan none),
		closed:      make(chan none),
		seedBrokers: seeds,
		brokers:     map[int32]*Broker{},
		metadata:    map[string]map[int32]*PartitionMetadata{},
	}
	// do an initial fetch of all cluster metadata
	if err := c.RefreshMetadata(); err != nil {
		return nil, err
	}
	go c.backgroundMetadataUpdater()
	return c, nil
}

func (client *client) Closed() bool { return client.brokers == nil }

func (client *client) Close() error {
	if client.Closed() {
		return ErrClosedClient
	}

	// shutdown and wait for the background thread before we take the lock, to avoid races
	close(client.closer)
	<-client.closed

	client.lock.Lock()
	defer client.lock.Unlock()

	for _, broker := range client.brokers {
		_ = broker.Close()
	}
	client.brokers = nil
	client.metadata = nil
	return nil
}

func (client *client) any() *Broker {
	client.lock.RLock()
	defer client.lock.RUnlock()
	if len(client.seedBrokers) > 0 {
		return client.seedBrokers[0]
	}
	for _, broker := range client.brokers {
		return broker
	}
	return nil
}

func (client *client) RefreshMetadata(topics ...string) error {
	return client.tryRefreshMetadata(topics, client.conf.Metadata.Retry.Max)
}

func (client *client) tryRefreshMetadata(topics []string, attemptsRemaining int) error {
	for broker := client.any(); broker != nil; broker = client.any() {
		response, err := broker.GetMetadata(&MetadataRequest{Topics: topics})
		if err == nil {
			// valid response, use it
			if retry := client.updateMetadata(response); retry && attemptsRemaining > 0 {
				time.Sleep(client.conf.Metadata.Retry.Backoff)
				return client.tryRefreshMetadata(topics, attemptsRemaining-1)
			}
			return nil
		}
		return err
	}
	return errors.New("kafka: client has run out of available brokers")
}

// updateMetadata returns true if some partitions need to be refreshed again.
func (client *client) updateMetadata(data *MetadataResponse) (retry bool) {
	client.lock.Lock()
	defer client.lock.Unlock()
	for _, broker := range data.Brokers {
		client.brokers[broker.ID()] = broker
	}
	for _, topic := range data.Topics {
		client.metadata[topic.Name] = make(map[int32]*PartitionMetadata, len(topic.Partitions))
		for _, p := range topic.Partitions {
			client.metadata[topic.Name][p.ID] = p
			retry = retry || p.Leader < 0
		}
	}
	return retry
}

func (client *client) backgroundMetadataUpdater() {
	defer close(client.closed)
	ticker := time.NewTicker(client.conf.Metadata.RefreshFrequency)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			if err := client.RefreshMetadata(); err != nil {
				fmt.Println("Client background metadata update:", err)
			}
		case <-client.closer:
			return
		}
	}
}

// fakeCluster answers metadata requests like a (slow) Kafka broker.
type fakeCluster struct {
	self     *Broker
	requests chan *MetadataRequest
}

func (f *fakeCluster) roundTrip(req *MetadataRequest) (*MetadataResponse, error) {
	f.requests <- req
	time.Sleep(30 * time.Millisecond) // network round trip
	return &MetadataResponse{
		Brokers: []*Broker{f.self},
		Topics:  []*TopicMetadata{{Name: "events", Partitions: []*PartitionMetadata{{ID: 0, Leader: 1}}}},
	}, nil
}

func main() {
	fc := &fakeCluster{requests: make(chan *MetadataRequest, 64)}
	seed := &Broker{id: 1, addr: "localhost:9092", conn: fc}
	fc.self = seed
	conf := &Config{}
	conf.Metadata.Retry.Max = 3
	conf.Metadata.Retry.Backoff = 10 * time.Millisecond
	conf.Metadata.RefreshFrequency = 10 * time.Millisecond

	c, err := NewClient([]*Broker{seed}, conf)
	if err != nil {
		panic(err)
	}
	<-fc.requests // the initial refresh
	<-fc.requests // the background updater is now in a refresh
	if err := c.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("client closed")
}
