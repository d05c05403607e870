// Pattern: nsqio/nsq nsqd clientV2 RDY / in-flight accounting: a channel
// only pushes a message to a consumer connection while the consumer has
// RDY credit. The credit is taken before the channel lock, then the message
// is recorded in the in-flight map and queued on the client's send buffer
// under the lock. The client FINs under the same lock and then returns the
// credit, so at most maxRdyCount messages are ever queued or in flight and
// the send under the lock always finds room.
package main

import (
	"fmt"
	"sync"
	"time"
)

const maxRdyCount = 32

type Message struct {
	ID   int
	Body []byte
}

type Channel struct {
	mu         sync.Mutex
	inFlight   map[int]time.Time
	finished   int
	maxSeen    int
	clientMsgs chan *Message // client send buffer
	rdy        chan struct{} // RDY credits
}

func NewChannel() *Channel {
	c := &Channel{
		inFlight:   make(map[int]time.Time),
		clientMsgs: make(chan *Message, maxRdyCount),
		rdy:        make(chan struct{}, maxRdyCount),
	}
	for i := 0; i < maxRdyCount; i++ {
		c.rdy <- struct{}{} // client announces RDY maxRdyCount
	}
	return c
}

func (c *Channel) PutMessage(m *Message) {
	<-c.rdy // wait for credit without holding the lock
	c.mu.Lock()
	c.inFlight[m.ID] = time.Now()
	if n := len(c.inFlight); n > c.maxSeen {
		c.maxSeen = n
	}
	c.clientMsgs <- m
	c.mu.Unlock()
}

func (c *Channel) FinishMessage(id int) {
	c.mu.Lock()
	delete(c.inFlight, id)
	c.finished++
	c.mu.Unlock()
	c.rdy <- struct{}{} // give the credit back
}

func main() {
	ch := NewChannel()

	var client sync.WaitGroup
	client.Add(1)
	go func() {
		defer client.Done()
		for m := range ch.clientMsgs {
			if m.ID%7 == 0 {
				time.Sleep(30 * time.Microsecond) // slow handler
			}
			ch.FinishMessage(m.ID)
		}
	}()

	var producers sync.WaitGroup
	for p := 0; p < 4; p++ {
		producers.Add(1)
		go func(p int) {
			defer producers.Done()
			for i := 0; i < 1000; i++ {
				ch.PutMessage(&Message{ID: p*1000 + i, Body: []byte("payload")})
			}
		}(p)
	}
	producers.Wait()
	close(ch.clientMsgs)
	client.Wait()

	ch.mu.Lock()
	fmt.Printf("finished=%d inflight=%d max_inflight=%d\n", ch.finished, len(ch.inFlight), ch.maxSeen)
	ch.mu.Unlock()
}
