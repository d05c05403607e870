// Package kgo is a stub of franz-go's client: only what the tests use.
package kgo

import "context"

// Client is a Kafka client.
type Client struct{}

// Opt is a client option.
type Opt interface{ apply(*Client) }

type opt func(*Client)

func (o opt) apply(c *Client) { o(c) }

// NewClient returns a client.
func NewClient(opts ...Opt) (*Client, error) { return &Client{}, nil }

// OnPartitionsRevoked sets the function called when partitions are revoked.
func OnPartitionsRevoked(fn func(context.Context, *Client, map[string][]int32)) Opt {
	return opt(func(*Client) {})
}

// BlockRebalanceOnPoll makes rebalance callbacks wait for AllowRebalance.
func BlockRebalanceOnPoll() Opt { return opt(func(*Client) {}) }

// AllowRebalance lets a blocked rebalance proceed.
func (c *Client) AllowRebalance() {}

// Record is a Kafka record.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Fetches is the result of a poll.
type Fetches []*Record

// EachRecord calls fn for each record.
func (fs Fetches) EachRecord(fn func(*Record)) {
	for _, r := range fs {
		fn(r)
	}
}

// PollFetches waits for records.
func (c *Client) PollFetches(ctx context.Context) Fetches { return nil }

// CommitRecords commits the given records' offsets.
func (c *Client) CommitRecords(ctx context.Context, rs ...*Record) error { return nil }

// Close closes the client.
func (c *Client) Close() {}
