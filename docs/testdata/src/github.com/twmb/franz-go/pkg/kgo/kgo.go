// Package kgo is a stub of franz-go's client for the examples.
package kgo

import "context"

type Client struct{}

type Opt interface{ apply() }

type opt struct{}

func (opt) apply() {}

func OnPartitionsAssigned(func(context.Context, *Client, map[string][]int32)) Opt { return opt{} }
func OnPartitionsRevoked(func(context.Context, *Client, map[string][]int32)) Opt  { return opt{} }
func OnPartitionsLost(func(context.Context, *Client, map[string][]int32)) Opt     { return opt{} }
func BlockRebalanceOnPoll() Opt                                                   { return opt{} }

func NewClient(opts ...Opt) (*Client, error) { return &Client{}, nil }

type Record struct {
	Topic     string
	Partition int32
	Offset    int64
}

type Fetches []*Record

func (*Client) PollFetches(context.Context) Fetches             { return nil }
func (*Client) AllowRebalance()                                 {}
func (*Client) CommitRecords(context.Context, ...*Record) error { return nil }
func (*Client) MarkCommitRecords(...*Record)                    {}
