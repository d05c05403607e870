// Package kgo is a stub of franz-go's client, enough for the user module
// to compile: the analysis needs only the API's shape.
package kgo

import "context"

type Client struct{}

type Opt interface{ apply(*Client) }

type opt func(*Client)

func (o opt) apply(c *Client) { o(c) }

func NewClient(opts ...Opt) (*Client, error) { return &Client{}, nil }

func SeedBrokers(brokers ...string) Opt  { return opt(func(*Client) {}) }
func ConsumerGroup(group string) Opt     { return opt(func(*Client) {}) }
func ConsumeTopics(topics ...string) Opt { return opt(func(*Client) {}) }

func OnPartitionsAssigned(fn func(context.Context, *Client, map[string][]int32)) Opt {
	return opt(func(*Client) {})
}

func OnPartitionsRevoked(fn func(context.Context, *Client, map[string][]int32)) Opt {
	return opt(func(*Client) {})
}

func OnPartitionsLost(fn func(context.Context, *Client, map[string][]int32)) Opt {
	return opt(func(*Client) {})
}

type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
}

type Fetches []*Record

func (fs Fetches) EachRecord(fn func(*Record)) {
	for _, r := range fs {
		fn(r)
	}
}

func (c *Client) PollFetches(ctx context.Context) Fetches                { <-ctx.Done(); return nil }
func (c *Client) CommitRecords(ctx context.Context, rs ...*Record) error { return nil }
func (c *Client) Close()                                                 {}
