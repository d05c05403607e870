// Package kgo is a test stub of franz-go's client options.
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

func (*Client) PollFetches(context.Context) []int { return nil }
func (*Client) AllowRebalance()                   {}
