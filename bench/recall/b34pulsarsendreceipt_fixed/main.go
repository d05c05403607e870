// Project: Apache Pulsar Go client, pulsar-client-go (pulsar/internal/connection.go, pulsar/producer_partition.go), v0.2/v0.3
// Issue: apache/pulsar-client-go PR #378 "Fix producer deadlock after write failure"
// Fixed twin of b34pulsarsendreceipt, with the fix of PR #378: handleSendReceipt only looks the producer up
// under the connection mutex and calls ReceivedSendReceipt after unlocking, so the producer may close the
// connection from the callback.
package main

import (
	"container/list"
	"fmt"
	"sync"
)

type CommandSendReceipt struct {
	ProducerID uint64
	SequenceID uint64
	MessageID  string
}

type BaseCommand struct {
	Type        string
	SendReceipt *CommandSendReceipt
}

// ConnectionListener is a user of a connection (or connections) that can register interest
// and get notified of connection events.
type ConnectionListener interface {
	ReceivedSendReceipt(response *CommandSendReceipt)
	ConnectionClosed()
}

// Connection is the interface the producers and consumers see.
type Connection interface {
	RegisterListener(id uint64, listener ConnectionListener)
	Close()
}

type connectionState int

const (
	connectionReady connectionState = iota
	connectionClosed
)

type connection struct {
	sync.Mutex
	cond  *sync.Cond
	state connectionState

	incomingCmdCh chan *BaseCommand
	closeCh       chan interface{}

	listeners map[uint64]ConnectionListener
}

func newConnection() *connection {
	c := &connection{
		state:         connectionReady,
		incomingCmdCh: make(chan *BaseCommand, 10),
		closeCh:       make(chan interface{}),
		listeners:     make(map[uint64]ConnectionListener),
	}
	c.cond = sync.NewCond(c)
	return c
}

func (c *connection) run() {
	for {
		select {
		case <-c.closeCh:
			return
		case cmd := <-c.incomingCmdCh:
			c.internalReceivedCommand(cmd)
		}
	}
}

func (c *connection) internalReceivedCommand(cmd *BaseCommand) {
	switch cmd.Type {
	case "SEND_RECEIPT":
		c.handleSendReceipt(cmd.SendReceipt)
	default:
		fmt.Println("Received invalid command type:", cmd.Type)
	}
}

func (c *connection) handleSendReceipt(response *CommandSendReceipt) {
	producerID := response.ProducerID

	c.Lock()
	producer, ok := c.listeners[producerID]
	c.Unlock()

	if ok {
		producer.ReceivedSendReceipt(response)
	} else {
		fmt.Println("Got unexpected send receipt for message:", response.MessageID)
	}
}

func (c *connection) RegisterListener(id uint64, listener ConnectionListener) {
	c.Lock()
	defer c.Unlock()
	c.listeners[id] = listener
}

func (c *connection) Close() {
	c.Lock()
	defer c.Unlock()

	c.cond.Broadcast()

	if c.state == connectionClosed {
		return
	}

	fmt.Println("Connection closed")
	c.state = connectionClosed
	close(c.closeCh)

	for _, listener := range c.listeners {
		listener.ConnectionClosed()
	}
	c.listeners = make(map[uint64]ConnectionListener)
}

type pendingItem struct {
	sequenceID   uint64
	sendRequests []func(msgID string, err error)
}

type connectionClosedEvent struct{}

type partitionProducer struct {
	producerID      uint64
	cnx             Connection
	pendingMu       sync.Mutex
	pendingQueue    *list.List
	connectClosedCh chan connectionClosedEvent
}

func (p *partitionProducer) peek() (*pendingItem, bool) {
	p.pendingMu.Lock()
	defer p.pendingMu.Unlock()
	if e := p.pendingQueue.Front(); e != nil {
		return e.Value.(*pendingItem), true
	}
	return nil, false
}

func (p *partitionProducer) ReceivedSendReceipt(response *CommandSendReceipt) {
	pi, ok := p.peek()
	if !ok {
		// if we receive a receipt although the pending queue is empty, the state of the broker and the producer differs.
		// At that point, it is better to close the connection to the broker to reconnect to a broker hopping it solves
		// the state discrepancy.
		fmt.Printf("Received ack for %v although the pending queue is empty, closing connection\n", response.MessageID)
		p.cnx.Close()
		return
	}

	if pi.sequenceID != response.SequenceID {
		// if we receive a receipt that is not the one expected, the state of the broker and the producer differs.
		// At that point, it is better to close the connection to the broker to reconnect to a broker hopping it solves
		// the state discrepancy.
		fmt.Printf("Received ack for %v on sequenceId %v - expected: %v, closing connection\n", response.MessageID,
			response.SequenceID, pi.sequenceID)
		p.cnx.Close()
		return
	}

	// The ack was indeed for the expected item in the queue, we can remove it and trigger the callback
	p.pendingMu.Lock()
	p.pendingQueue.Remove(p.pendingQueue.Front())
	p.pendingMu.Unlock()
	for _, cb := range pi.sendRequests {
		cb(response.MessageID, nil)
	}
}

func (p *partitionProducer) ConnectionClosed() {
	// Trigger reconnection in the produce goroutine
	p.connectClosedCh <- connectionClosedEvent{}
}

func (p *partitionProducer) runEventsLoop(reconnected chan<- struct{}) {
	for range p.connectClosedCh {
		fmt.Println("runEventsLoop will reconnect")
		reconnected <- struct{}{}
		return
	}
}

func main() {
	cnx := newConnection()
	go cnx.run()

	p := &partitionProducer{producerID: 1, cnx: cnx, pendingQueue: list.New(), connectClosedCh: make(chan connectionClosedEvent, 10)}
	cnx.RegisterListener(p.producerID, p)
	reconnected := make(chan struct{})
	go p.runEventsLoop(reconnected)

	// sequence 0 was lost by a failed write; the producer now waits for 1
	p.pendingQueue.PushBack(&pendingItem{sequenceID: 1, sendRequests: []func(string, error){
		func(id string, err error) { fmt.Println("message", id, "persisted", err) },
	}})

	cnx.incomingCmdCh <- &BaseCommand{Type: "SEND_RECEIPT", SendReceipt: &CommandSendReceipt{ProducerID: 1, SequenceID: 0, MessageID: "13:0:-1"}}

	<-reconnected
	fmt.Println("producer reconnected")
}
