// Project: github.com/segmentio/kafka-go (reader.go, consumer-group Reader)
// Bug: Reader.Close held r.mutex while it cancelled the reader and waited on r.join
// for the consumer-group goroutine; when that goroutine had just received a new
// generation it calls r.subscribe, which needs r.mutex to start the partition
// readers, so join.Wait never returns and Close hangs.
// Fix: Close only flips r.closed under r.mutex, releases it, then cancels and
// waits for the goroutines.

package b20kafkareader_fixed

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type Message struct {
	Topic     string
	Partition int
	Offset    int64
	Value     []byte
}

type Generation struct {
	ID          int32
	Assignments map[string][]int
}

// ConsumerGroup hands out generations after each rebalance.
type ConsumerGroup interface {
	Next(ctx context.Context) (*Generation, error)
	Close() error
}

type ReaderConfig struct {
	GroupID        string
	Topic          string
	MinBytes       int
	MaxBytes       int
	CommitInterval time.Duration
}

type Reader struct {
	config  ReaderConfig
	msgs    chan Message
	mutex   sync.Mutex
	join    sync.WaitGroup
	cancel  context.CancelFunc
	stop    context.CancelFunc
	version int64
	offset  int64
	lag     int64
	closed  bool
	once    uint32
	stctx   context.Context
}

func NewReader(config ReaderConfig, cg ConsumerGroup) *Reader {
	stctx, stop := context.WithCancel(context.Background())
	r := &Reader{config: config, msgs: make(chan Message, 100), cancel: func() {}, stop: stop, stctx: stctx, offset: -1}
	r.join.Add(1)
	go r.run(cg)
	return r
}

func (r *Reader) run(cg ConsumerGroup) {
	defer r.join.Done()
	defer cg.Close()
	for {
		gen, err := cg.Next(r.stctx)
		if err != nil {
			if errors.Is(err, r.stctx.Err()) {
				return
			}
			continue
		}
		r.subscribe(gen.Assignments)
	}
}

func (r *Reader) subscribe(assignments map[string][]int) {
	offsets := make(map[int]int64)
	for _, partitions := range assignments {
		for _, p := range partitions {
			offsets[p] = -2 // FirstOffset
		}
	}
	r.mutex.Lock()
	r.start(offsets)
	r.mutex.Unlock()
}

// start launches one partition reader per assigned partition; r.mutex must be held.
func (r *Reader) start(offsetsByPartition map[int]int64) {
	if r.closed {
		return
	}
	r.cancel() // stop the previous generation's readers
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.version++
	for partition, offset := range offsetsByPartition {
		r.join.Add(1)
		go func(ctx context.Context, partition int, offset int64) {
			defer r.join.Done()
			<-ctx.Done() // fetch loop: sends batches to r.msgs until cancelled
		}(ctx, partition, offset)
	}
}

// Close closes the stream, preventing the program from reading any more messages.
func (r *Reader) Close() error {
	atomic.StoreUint32(&r.once, 1)
	r.mutex.Lock()
	closed := r.closed
	r.closed = true
	cancel := r.cancel
	r.mutex.Unlock()

	cancel()
	r.stop()
	r.join.Wait()

	if !closed {
		close(r.msgs)
	}
	return nil
}

// Lag returns the lag of the last message returned by ReadMessage.
func (r *Reader) Lag() int64 {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	return r.lag
}

// rebalancingGroup delivers one generation that was already being joined when
// Close was called.
type rebalancingGroup struct {
	joining chan struct{}
	joined  chan struct{}
	served  bool
}

func (g *rebalancingGroup) Next(ctx context.Context) (*Generation, error) {
	if !g.served {
		g.served = true
		close(g.joining)
		<-g.joined // SyncGroup response arrives
		return &Generation{ID: 3, Assignments: map[string][]int{"orders": {0, 1, 2}}}, nil
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (g *rebalancingGroup) Close() error { return nil }

func TestCloseDuringRebalance(t *testing.T) {
	cg := &rebalancingGroup{joining: make(chan struct{}), joined: make(chan struct{})}
	r := NewReader(ReaderConfig{GroupID: "billing", Topic: "orders", MaxBytes: 10e6}, cg)
	<-cg.joining

	done := make(chan error)
	go func() { done <- r.Close() }()
	time.Sleep(100 * time.Millisecond) // Close holds r.mutex, waits on r.join
	close(cg.joined)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
