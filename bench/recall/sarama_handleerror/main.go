// Project: Shopify/sarama (consumer_group.go)
// Bug: consumerGroup.Consume holds c.lock for the whole session and sess.release blocks on
//   <-s.hbDead. The heartbeat goroutine closes hbDead only on return, but when it runs out of
//   retries it first calls c.handleError, which takes c.lock: both goroutines wait forever.
// Upstream fix: handleError no longer takes c.lock (Shopify/sarama #1581, fixes #1554)

package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrClosedConsumerGroup = errors.New("kafka: tried to use a consumer group that was closed")

type Config struct {
	ReturnErrors      bool
	HeartbeatInterval time.Duration
	RetryMax          int
}

type Broker struct{ ID int32 }

type Client interface {
	Coordinator(group string) (*Broker, error)
}

type flakyClient struct{}

func (flakyClient) Coordinator(string) (*Broker, error) { return &Broker{ID: 1}, nil }

type consumerGroup struct {
	client  Client
	config  *Config
	groupID string

	lock      sync.Mutex
	closed    chan struct{}
	closeOnce sync.Once
	errors    chan error
}

func NewConsumerGroupFromClient(groupID string, client Client, conf *Config) *consumerGroup {
	return &consumerGroup{
		client:  client,
		config:  conf,
		groupID: groupID,
		errors:  make(chan error, 256),
		closed:  make(chan struct{}),
	}
}

type consumerGroupSession struct {
	parent       *consumerGroup
	memberID     string
	generationID int32
	ctx          context.Context
	cancel       func()
	waitGroup    sync.WaitGroup
	releaseOnce  sync.Once
	hbDying      chan struct{}
	hbDead       chan struct{}
}

func newConsumerGroupSession(ctx context.Context, parent *consumerGroup, memberID string, generationID int32) *consumerGroupSession {
	ctx, cancel := context.WithCancel(ctx)
	sess := &consumerGroupSession{
		parent:       parent,
		memberID:     memberID,
		generationID: generationID,
		ctx:          ctx,
		cancel:       cancel,
		hbDying:      make(chan struct{}),
		hbDead:       make(chan struct{}),
	}
	// start heartbeat loop
	go sess.heartbeatLoop()
	return sess
}

func (s *consumerGroupSession) release(withCleanup bool) (err error) {
	// signal release, stop heartbeat
	s.cancel()
	// wait for consumers to exit
	s.waitGroup.Wait()
	s.releaseOnce.Do(func() {
		close(s.hbDying)
		<-s.hbDead
	})
	return
}

func (c *consumerGroup) heartbeatRequest(coordinator *Broker, memberID string, generationID int32) error {
	return errors.New("kafka server: The coordinator is loading and hence can't process requests")
}

func (s *consumerGroupSession) heartbeatLoop() {
	defer close(s.hbDead)
	defer s.cancel() // trigger the end of the session on exit

	pause := time.NewTicker(s.parent.config.HeartbeatInterval)
	defer pause.Stop()

	retries := s.parent.config.RetryMax
	for {
		coordinator, err := s.parent.client.Coordinator(s.parent.groupID)
		if err != nil {
			return
		}
		if err := s.parent.heartbeatRequest(coordinator, s.memberID, s.generationID); err != nil {
			if retries <= 0 {
				s.parent.handleError(err, "", -1)
				return
			}
			retries--
		}
		select {
		case <-pause.C:
		case <-s.hbDying:
			return
		}
	}
}

func (c *consumerGroup) handleError(err error, topic string, partition int32) {
	if !c.config.ReturnErrors {
		fmt.Println("consumer group error:", err)
		return
	}

	c.lock.Lock()
	defer c.lock.Unlock()

	select {
	case <-c.closed:
		// consumer is closed
		return
	default:
	}

	select {
	case c.errors <- err:
	default:
		// no error listener
	}
}

// Consume implements ConsumerGroup.
func (c *consumerGroup) Consume(ctx context.Context, topics []string) error {
	// Ensure group is not closed
	select {
	case <-c.closed:
		return ErrClosedConsumerGroup
	default:
	}

	c.lock.Lock()
	defer c.lock.Unlock()

	sess := newConsumerGroupSession(ctx, c, "sarama-7f1c", 12)

	// Wait for session exit signal (rebalance / ctx cancelled)
	<-sess.ctx.Done()

	// Gracefully release session claims
	return sess.release(true)
}

func main() {
	conf := &Config{ReturnErrors: true, HeartbeatInterval: 3 * time.Millisecond, RetryMax: 3}
	group := NewConsumerGroupFromClient("billing", flakyClient{}, conf)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// a rebalance ends the session after heartbeats ran out of retries
		time.Sleep(30 * time.Millisecond)
		cancel()
	}()
	err := group.Consume(ctx, []string{"invoices"})
	fmt.Println("consume returned:", err, "errors queued:", len(group.errors))
}
