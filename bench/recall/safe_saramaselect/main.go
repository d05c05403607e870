// Modelled on sarama's async producer: the input channel is sized from
// Config.ChannelBufferSize. The partition producer hands messages to the
// broker queue while holding its own mutex, but every send is a select with
// either a default case (drop + count as error) or a ctx.Done case, so a
// holder of the mutex can never block indefinitely on the channel.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Config struct {
	ChannelBufferSize int
}

type ProducerMessage struct {
	Topic     string
	Partition int
	Value     string
}

type partitionProducer struct {
	mu       sync.Mutex // guards retries, dropped, enqueued
	retries  int
	dropped  int
	enqueued int

	ackMu sync.Mutex // guards acked; used by the broker goroutine only
	acked int

	brokerQueue chan *ProducerMessage // cap = Config.ChannelBufferSize
}

func newPartitionProducer(cfg Config) *partitionProducer {
	return &partitionProducer{brokerQueue: make(chan *ProducerMessage, cfg.ChannelBufferSize)}
}

// tryEnqueue never blocks while pp.mu is held: the select has a default.
func (pp *partitionProducer) tryEnqueue(msg *ProducerMessage) bool {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	select {
	case pp.brokerQueue <- msg:
		pp.enqueued++
		return true
	default:
		pp.dropped++
		return false
	}
}

// enqueueRetry may block, but only until ctx is done.
func (pp *partitionProducer) enqueueRetry(ctx context.Context, msg *ProducerMessage) error {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.retries++
	select {
	case pp.brokerQueue <- msg:
		pp.enqueued++
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// brokerLoop consumes the queue; it never takes pp.mu, only its own ackMu.
func (pp *partitionProducer) brokerLoop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case msg := <-pp.brokerQueue:
			_ = msg
			time.Sleep(50 * time.Microsecond)
			pp.ackMu.Lock()
			pp.acked++
			pp.ackMu.Unlock()
		case <-ctx.Done():
			return
		}
	}
}

func main() {
	cfg := Config{ChannelBufferSize: 4}
	pp := newPartitionProducer(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	brokerDone := make(chan struct{})
	go pp.brokerLoop(ctx, brokerDone)

	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				msg := &ProducerMessage{Topic: "events", Partition: p, Value: fmt.Sprint(i)}
				if !pp.tryEnqueue(msg) && i%10 == 0 {
					rctx, rcancel := context.WithTimeout(ctx, 5*time.Millisecond)
					_ = pp.enqueueRetry(rctx, msg)
					rcancel()
				}
			}
		}(p)
	}
	wg.Wait()
	cancel()
	<-brokerDone

	pp.ackMu.Lock()
	acked := pp.acked
	pp.ackMu.Unlock()
	pp.mu.Lock()
	fmt.Printf("enqueued=%d acked=%d dropped=%d retries=%d\n", pp.enqueued, acked, pp.dropped, pp.retries)
	pp.mu.Unlock()
}
