// Package fixed is the example consumer with every bug fixed the way
// confinelint's findings advise: the rebalance callback hands the commit to
// the control goroutine and waits with a bound; locks are always taken in
// one order. `confinelint ./fixed` reports nothing.
package fixed

import (
	"sync"
	"time"

	"example.com/pipeline/broker"
	"github.com/confinelint/confinelint/confine"
)

// Consumer processes records in parallel and commits their offsets.
type Consumer struct {
	client *broker.Client

	owner confine.Owner //confined:control

	inflight int                //confined:control
	done     map[int32]int64    //confined:control
	mailbox  chan completion    // workers -> control
	revokes  chan revokeRequest // poll goroutine -> control

	commitMu sync.Mutex //confined:before statsMu
	statsMu  sync.Mutex
	commits  int //confined:guardedby statsMu
}

type completion struct {
	partition int32
	offset    int64
}

// revokeRequest asks the control goroutine to commit before partitions go
// away; it closes ack when done.
type revokeRequest struct {
	partitions []int32
	ack        chan struct{}
}

// New returns a consumer; Run starts its control goroutine.
func New(client *broker.Client) *Consumer {
	c := &Consumer{
		client:  client,
		done:    map[int32]int64{},
		mailbox: make(chan completion, 64),
		revokes: make(chan revokeRequest),
	}
	client.OnRevoked(c.onRevoked)
	return c
}

// Run is the control goroutine.
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
		case req := <-c.revokes:
			c.inflight -= len(req.partitions)
			c.commitDrained()
			close(req.ack)
			continue
		case <-stop:
			return
		}
		c.commitDrained()
	}
}

// commitDrained takes the commit lock, drains, and commits: the order the
// revokepath check asks for.
func (c *Consumer) commitDrained() {
	c.commitMu.Lock()
	c.drain()
	c.commit()
	c.commitMu.Unlock()
}

func (c *Consumer) process(rec broker.Record) {
	c.mailbox <- completion{partition: rec.Partition, offset: rec.Offset + 1}
}

func (c *Consumer) apply(done completion) {
	c.inflight--
	c.done[done.partition] = done.offset
}

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

//confined:commit
//confined:requires commitMu
func (c *Consumer) commit() {
	c.client.CommitOffsets(c.done)
	c.statsMu.Lock()
	c.commits++
	c.statsMu.Unlock()
}

// onRevoked runs on the broker's poll goroutine: it hands the commit to the
// control goroutine and waits, bounded, for it to finish.
func (c *Consumer) onRevoked(partitions []int32) {
	req := revokeRequest{partitions: partitions, ack: make(chan struct{})}
	select {
	case c.revokes <- req:
	case <-time.After(5 * time.Second):
		return
	}
	select {
	case <-req.ack:
	case <-time.After(5 * time.Second):
	}
}

// Inflight reports the records in flight. It is exported, so static
// analysis cannot see every caller: it declares its role and asserts it, and
// a call from another goroutine panics in builds with -tags confine or -race.
//
//confined:control
func (c *Consumer) Inflight() int {
	c.owner.Assert()
	return c.inflight
}

// Stats takes the locks in the declared order.
func (c *Consumer) Stats() int {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	c.statsMu.Lock()
	defer c.statsMu.Unlock()
	return c.commits
}
