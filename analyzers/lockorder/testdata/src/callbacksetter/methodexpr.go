package callbacksetter

import "sync"

// A method expression stored as a func field: (*Channel).sendOpen is the
// method, its receiver the first argument. Publish holds the channel's
// lock and sends through the field; sendOpen locks it again.

type Channel struct {
	mu   sync.Mutex
	send func(*Channel, string) error
	sent int
}

func NewChannel() *Channel {
	return &Channel{send: (*Channel).sendOpen}
}

func (c *Channel) sendOpen(msg string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent++
	return nil
}

func (c *Channel) Publish(msg string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.send(c, msg) // want `Channel.mu locked again by Channel.sendOpen`
}

// Correct: the stored method counts under a lock of its own.
type Outbox struct {
	mu    sync.Mutex
	statM sync.Mutex
	push  func(*Outbox, string)
	n     int
}

func NewQueue() *Outbox {
	return &Outbox{push: (*Outbox).count}
}

func (q *Outbox) count(msg string) {
	q.statM.Lock()
	q.n++
	q.statM.Unlock()
}

func (q *Outbox) Push(msg string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.push(q, msg)
}
