// Package consumer is a parallel consumer in the shape confinelint exists
// for: a control goroutine owns the in-flight state, workers report finished
// records through a mailbox channel, and the broker client calls a
// rebalance callback on its own poll goroutine. It carries the bugs on
// purpose; `confinelint ./...` in examples/ reports each one.
//
// This is examples/consumer with every directive removed: the suggest
// analyzer's fixes must put back what makes the checks report the bugs
// (see consumer_test.go).
package consumer

import (
	"sync"

	"example.com/pipeline/broker"
	"github.com/confinelint/confinelint/confine"
)

// Consumer processes records in parallel and commits their offsets.
type Consumer struct {
	client *broker.Client

	owner confine.Owner

	// inflight counts records handed to workers and not yet drained.
	inflight int // want `Consumer.inflight: add //confined:control \(rank \d of \d\): 2 of 3 accesses \(2 of 3 writes\) run on Consumer.Run's goroutine only; 1 deviant: c.inflight written in Consumer.onRevoked \(reached from New, whose callers are unknown\)`
	// done holds per-partition offsets that are processed and drained,
	// waiting to be committed.
	done map[int32]int64 // want `Consumer.done: add //confined:control \(rank \d of \d\): 1 of 2 accesses \(1 of 1 writes\) run on Consumer.Run's goroutine only; 1 deviant: c.done read in Consumer.commit \(reached from New, whose callers are unknown\)`

	// mailbox receives completions from the workers.
	mailbox chan completion

	// commitMu serialises commits with output production.
	commitMu sync.Mutex
	statsMu  sync.Mutex
	commits  int // want `Consumer.commits: add //confined:guardedby statsMu \(rank \d of \d\): statsMu is held at 2 of 2 accesses`
	failures int
}

type completion struct {
	partition int32
	offset    int64
}

// New returns a consumer; Run starts its control goroutine.
func New(client *broker.Client) *Consumer {
	c := &Consumer{client: client, done: map[int32]int64{}, mailbox: make(chan completion, 64)}
	c.inflight = 0 // construction: not yet shared
	client.OnRevoked(c.onRevoked)
	return c
}

// Run is the control goroutine: it hands records to workers, applies their
// completions, and commits.
func (c *Consumer) Run(stop <-chan struct{}) { // want `Consumer.Run: add //confined:entry \(rank \d of \d\): its loop receives from c.client.Records\(\) and its goroutine owns Consumer.inflight, Consumer.done`
	c.owner.Bind()
	for {
		select {
		case rec := <-c.client.Records():
			c.inflight++
			go c.process(rec)
		case done := <-c.mailbox:
			c.apply(done)
		case <-stop:
			return
		}
		c.commitMu.Lock()
		c.drain()
		c.commit()
		c.commitMu.Unlock()
	}
}

// process runs on a worker goroutine and reports through the mailbox.
func (c *Consumer) process(rec broker.Record) {
	c.mailbox <- completion{partition: rec.Partition, offset: rec.Offset + 1}
}

func (c *Consumer) apply(done completion) {
	c.inflight--
	c.done[done.partition] = done.offset
}

// drain applies every completion waiting in the mailbox.
func (c *Consumer) drain() { // want `Consumer.drain: add //confined:drain \(rank \d of \d\): it loops over a non-blocking receive from c.mailbox on Consumer.Run's goroutine`
	for {
		select {
		case done := <-c.mailbox:
			c.apply(done)
		default:
			return
		}
	}
}

// commit publishes the drained offsets.
func (c *Consumer) commit() { // want `Consumer.commit: add //confined:commit \(rank \d of \d\): it calls CommitOffsets and reads Consumer.done, owned by Consumer.Run's goroutine`
	c.client.CommitOffsets(c.done)
	c.statsMu.Lock()
	c.commits++
	c.statsMu.Unlock()
}

// onRevoked runs on the broker's poll goroutine. BUG: it resets state the
// control goroutine owns and commits inline without draining the mailbox,
// so offsets of finished but undrained records are lost from the commit.
func (c *Consumer) onRevoked(partitions []int32) {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.inflight -= len(partitions)
	c.commit()
}

// Stats reads the commit count. BUG: it takes statsMu and then commitMu,
// the reverse of commit's order (commitMu then statsMu): AB-BA deadlock.
func (c *Consumer) Stats() int {
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	return c.commits
}
