package consumer

import (
	"context"
	"errors"
	"sync"
	"time"

	"example.com/shop/pool"

	"github.com/confinelint/confinelint/confine"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Stats are the consumer's counters, read by the status handler.
type Stats struct {
	Processed int64
	Commits   int64
	Failed    int64
}

type partition struct {
	topic string
	id    int32
}

// result is what a worker reports for one record.
type result struct {
	rec *kgo.Record
	err error
}

// Consumer processes records in parallel and commits in order.
type Consumer struct {
	cl    *kgo.Client
	owner confine.Owner //confined:control
	pool  *pool.Pool

	inflight int                         //confined:control // handed to workers, not yet applied
	done     map[partition]*kgo.Record   //confined:control // highest applied record per partition
	assigned map[partition]bool          //confined:control
	paused   bool                        //confined:control
	pending  map[partition][]*kgo.Record //confined:control // applied out of order, waiting

	work     chan *kgo.Record // control -> workers
	mailbox  chan result      // workers -> control
	requests chan func()      // anyone -> control; the function runs on control

	commitMu sync.Mutex //confined:before statsMu // held across a commit
	statsMu  sync.RWMutex
	stats    Stats //confined:guardedby statsMu

	prices   *Prices
	workers  int
	interval time.Duration
}

// New builds a consumer; Run starts its control goroutine.
func New(brokers []string, group string, workers int, shared *pool.Pool) (*Consumer, error) {
	c := &Consumer{
		pool:     shared,
		done:     map[partition]*kgo.Record{},
		assigned: map[partition]bool{},
		pending:  map[partition][]*kgo.Record{},
		work:     make(chan *kgo.Record, 4*workers),
		mailbox:  make(chan result, 4*workers),
		requests: make(chan func()),
		prices:   newPrices(),
		workers:  workers,
		interval: time.Second,
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics("orders"),
		kgo.OnPartitionsAssigned(c.onAssigned),
		kgo.OnPartitionsRevoked(c.onRevoked),
		kgo.OnPartitionsLost(c.onLost),
	)
	if err != nil {
		return nil, err
	}
	c.cl = cl
	return c, nil
}

// Run is the control goroutine: it feeds the workers, applies their
// results, answers requests and commits on a ticker and on the way out.
//
//confined:entry
func (c *Consumer) Run(ctx context.Context) error {
	c.owner.Bind()
	defer c.owner.Release()
	var wg sync.WaitGroup
	for range c.workers {
		wg.Go(c.worker)
	}
	defer wg.Wait()
	defer close(c.work)
	fetches := make(chan kgo.Fetches)
	go c.poll(ctx, fetches)
	ticker := time.NewTicker(c.interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			c.flush(context.WithoutCancel(ctx))
			return ctx.Err()
		case fs := <-fetches:
			c.dispatch(fs)
		case r := <-c.mailbox:
			c.apply(r)
		case req := <-c.requests:
			req()
		case <-ticker.C:
			c.flush(ctx)
		}
	}
}

// poll runs on a goroutine of its own and only hands fetches over.
func (c *Consumer) poll(ctx context.Context, out chan<- kgo.Fetches) {
	for ctx.Err() == nil {
		fs := c.cl.PollFetches(ctx)
		select {
		case out <- fs:
		case <-ctx.Done():
		}
	}
}

func (c *Consumer) dispatch(fs kgo.Fetches) {
	if c.paused {
		return
	}
	fs.EachRecord(func(r *kgo.Record) {
		c.inflight++
		c.work <- r
	})
}

// worker processes records; it owns nothing of control's and reports
// through the mailbox.
func (c *Consumer) worker() {
	for rec := range c.work {
		err := c.process(rec)
		c.mailbox <- result{rec: rec, err: err}
	}
}

var errNoPrice = errors.New("no price for the item")

func (c *Consumer) process(rec *kgo.Record) error {
	if _, ok := c.prices.Price(string(rec.Key)); !ok {
		return errNoPrice
	}
	return nil
}

// apply records a worker's result in control's state.
func (c *Consumer) apply(r result) {
	c.inflight--
	p := partition{r.rec.Topic, r.rec.Partition}
	if !c.assigned[p] {
		return // revoked meanwhile: the new owner reprocesses it
	}
	if prev := c.done[p]; prev == nil || r.rec.Offset > prev.Offset {
		c.done[p] = r.rec
	}
	c.statsMu.Lock()
	c.stats.Processed++
	if r.err != nil {
		c.stats.Failed++
	}
	c.statsMu.Unlock()
}

// flush applies what waits in the mailbox and commits it.
func (c *Consumer) flush(ctx context.Context) {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.drain()
	c.commit(ctx)
}

// drain applies every result waiting in the mailbox.
//
//confined:drain
func (c *Consumer) drain() {
	for {
		select {
		case r := <-c.mailbox:
			c.apply(r)
		default:
			return
		}
	}
}

// commit publishes the applied offsets.
//
//confined:commit
//confined:requires commitMu
func (c *Consumer) commit(ctx context.Context) {
	if len(c.done) == 0 {
		return
	}
	recs := make([]*kgo.Record, 0, len(c.done))
	for _, r := range c.done {
		recs = append(recs, r)
	}
	if err := c.cl.CommitRecords(ctx, recs...); err != nil {
		return
	}
	clear(c.done)
	c.statsMu.Lock()
	c.stats.Commits++
	c.statsMu.Unlock()
}

// Pause stops dispatching new records; callers on other goroutines post it
// as a request.
//
//confined:control
func (c *Consumer) Pause() {
	c.owner.Assert()
	c.paused = true
}

// ask runs f on the control goroutine and waits for it, bounded by ctx.
func (c *Consumer) ask(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case c.requests <- func() { f(); close(done) }:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
