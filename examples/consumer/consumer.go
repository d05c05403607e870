// Package consumer is a parallel consumer in the shape confinelint exists
// for: a control goroutine owns the in-flight state, workers report finished
// records through a mailbox channel, and the broker client calls a
// rebalance callback on its own poll goroutine. It carries the bugs on
// purpose; `confinelint ./...` in examples/ reports each one.
package consumer

import (
	"sync"

	"example.com/pipeline/broker"
	"github.com/confinelint/confinelint/confine"
)

// Consumer processes records in parallel and commits their offsets.
type Consumer struct {
	client *broker.Client

	owner confine.Owner //confined:control

	// inflight counts records handed to workers and not yet drained.
	inflight int //confined:control
	// done holds per-partition offsets that are processed and drained,
	// waiting to be committed.
	done map[int32]int64 //confined:control

	// mailbox receives completions from the workers.
	mailbox chan completion

	// commitMu serialises commits with output production.
	commitMu sync.Mutex //confined:before statsMu
	statsMu  sync.Mutex
	commits  int //confined:guardedby statsMu
	// The next directive is misspelled on purpose: confinelint suggests
	// the verb it meant instead of silently ignoring it.
	failures int //confined:guardeby statsMu
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
//
//confined:entry
func (c *Consumer) Run(stop <-chan struct{}) {
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
//
//confined:drain
func (c *Consumer) drain() {
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
//
//confined:commit
//confined:requires commitMu
func (c *Consumer) commit() {
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
