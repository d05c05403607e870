// Fixed twin: shape of franz-go (twmb/franz-go) issue #831, fixed by PR #832.
//
// Produce blocks when the client is over its max buffered records. A helper
// goroutine waits on the producer's sync.Cond and, on the way out, leaves
// p.mu locked for Produce to pick up. If the produce context is cancelled
// after the helper has already returned, select may take the ctx.Done case,
// and drainBuffered locks p.mu again: the owner is gone, so it blocks forever.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var errClientClosed = errors.New("client closed")

type Record struct {
	Topic string
	Value []byte
}

type promisedRec struct {
	ctx     context.Context
	promise func(*Record, error)
	*Record
}

type Logger interface {
	Log(level int, msg string, keyvals ...any)
}

// slowLogger stands in for a logger writing to a slow sink.
type slowLogger struct{}

func (slowLogger) Log(level int, msg string, keyvals ...any) {
	time.Sleep(40 * time.Millisecond)
}

type cfg struct {
	maxBufferedRecords int64
	logger             Logger
}

type producer struct {
	mu              sync.Mutex
	c               *sync.Cond
	bufferedRecords int64
	blocked         atomic.Int64
}

// sink holds the records handed to a broker and not answered yet.
type sink struct {
	mu      sync.Mutex
	pending []promisedRec
}

type Client struct {
	cfg      cfg
	ctx      context.Context
	producer producer
	sink     sink
}

func NewClient(max int64) *Client {
	cl := &Client{cfg: cfg{maxBufferedRecords: max, logger: slowLogger{}}, ctx: context.Background()}
	cl.producer.c = sync.NewCond(&cl.producer.mu)
	return cl
}

func (cl *Client) Produce(ctx context.Context, r *Record, promise func(*Record, error)) {
	p := &cl.producer
	var (
		nextBufRecs int64
		overMaxRecs bool
		calcNums    = func() {
			nextBufRecs = p.bufferedRecords + 1
			overMaxRecs = nextBufRecs > cl.cfg.maxBufferedRecords
		}
	)
	p.mu.Lock()
	calcNums()
	if overMaxRecs {
		p.blocked.Add(1)
		p.mu.Unlock()

		// We keep the lock when we exit; Produce unlocks it below.
		wait := make(chan struct{})
		var quit bool
		go func() {
			defer close(wait)
			p.mu.Lock()
			calcNums()
			for !quit && overMaxRecs {
				p.c.Wait()
				calcNums()
			}
			p.blocked.Add(-1)
		}()

		drainBuffered := func(err error) {
			// The waiter may already have returned holding p.mu, so
			// wake it from another goroutine instead of locking here.
			go func() {
				p.mu.Lock()
				quit = true
				p.mu.Unlock()
				p.c.Broadcast()
			}()
			<-wait
			p.mu.Unlock() // the goroutine above leaves the mutex locked
			cl.finishRecordPromise(promisedRec{ctx, promise, r}, err, false)
		}

		cl.cfg.logger.Log(4, "blocking Produce because we are over max buffered records")

		select {
		case <-wait:
		case <-cl.ctx.Done():
			drainBuffered(errClientClosed)
			return
		case <-ctx.Done():
			drainBuffered(ctx.Err())
			return
		}
	}
	p.bufferedRecords = nextBufRecs
	p.mu.Unlock()
	cl.partitionRecord(promisedRec{ctx, promise, r})
}

func (cl *Client) partitionRecord(pr promisedRec) {
	cl.sink.mu.Lock()
	cl.sink.pending = append(cl.sink.pending, pr)
	cl.sink.mu.Unlock()
}

// handleProduceResponse finishes the oldest record sent to the broker.
func (cl *Client) handleProduceResponse() {
	cl.sink.mu.Lock()
	pr := cl.sink.pending[0]
	cl.sink.pending = cl.sink.pending[1:]
	cl.sink.mu.Unlock()
	cl.finishRecordPromise(pr, nil, true)
}

func (cl *Client) finishRecordPromise(pr promisedRec, err error, buffered bool) {
	pr.promise(pr.Record, err)
	if !buffered {
		return
	}
	p := &cl.producer
	p.mu.Lock()
	p.bufferedRecords--
	if p.blocked.Load() > 0 {
		p.c.Broadcast()
	}
	p.mu.Unlock()
}

func main() {
	cl := NewClient(1)
	var acked, cancelled atomic.Int64
	promise := func(r *Record, err error) {
		if err != nil {
			cancelled.Add(1)
		} else {
			acked.Add(1)
		}
	}
	cl.Produce(context.Background(), &Record{Topic: "orders", Value: []byte("0")}, promise)

	for i := 1; i <= 40; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(10 * time.Millisecond); cl.handleProduceResponse() }()
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		cl.Produce(ctx, &Record{Topic: "orders", Value: []byte(fmt.Sprint(i))}, promise)
		cancel()
		cl.sink.mu.Lock()
		empty := len(cl.sink.pending) == 0
		cl.sink.mu.Unlock()
		if empty {
			cl.Produce(context.Background(), &Record{Topic: "orders", Value: []byte("refill")}, promise)
		}
	}
	fmt.Println("done: acked", acked.Load(), "cancelled", cancelled.Load())
}
