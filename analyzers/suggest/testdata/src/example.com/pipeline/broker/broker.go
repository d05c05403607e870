// Package broker is a stand-in for a Kafka client library: its poll loop
// runs on the client's own goroutine and calls the rebalance callbacks the
// application registered from there.
package broker

import "sync"

// Client polls a broker on its own goroutine.
type Client struct {
	mu        sync.Mutex
	onRevoked []func(partitions []int32) // want `Client.onRevoked: add //confined:guardedby mu \(rank \d of \d\): mu is held at 2 of 2 accesses`
	records   chan Record
}

// Record is one consumed message.
type Record struct {
	Partition int32
	Offset    int64
	Value     []byte
}

// NewClient returns a client; Start begins polling.
func NewClient() *Client { return &Client{records: make(chan Record, 64)} }

// OnRevoked registers fn to be called on the client's poll goroutine when
// partitions are taken away in a rebalance.
func (c *Client) OnRevoked(fn func(partitions []int32)) { // want `Client.OnRevoked: add //confined:spawns fn \(rank \d of \d\): fn is stored in c.onRevoked, whose values Client.poll calls on the goroutine started by the go statement`
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onRevoked = append(c.onRevoked, fn)
}

// Records is the stream of fetched records.
func (c *Client) Records() <-chan Record { return c.records }

// Start runs the poll loop on a new goroutine.
func (c *Client) Start(rebalances <-chan []int32) {
	go c.poll(rebalances)
}

func (c *Client) poll(rebalances <-chan []int32) {
	for revoked := range rebalances {
		c.mu.Lock()
		callbacks := append([]func([]int32){}, c.onRevoked...)
		c.mu.Unlock()
		for _, fn := range callbacks {
			fn(revoked)
		}
	}
}

// CommitOffsets publishes consumed offsets to the broker.
func (c *Client) CommitOffsets(offsets map[int32]int64) {}
