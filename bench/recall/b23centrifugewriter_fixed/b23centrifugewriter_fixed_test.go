// Project: centrifugal/centrifuge
// Bug: the client writer goroutine kept writer.mu held while blocking in
// messages.Wait() (a sync.Cond based queue); enqueue() needs writer.mu before
// it can Add to the queue and Signal the cond, so nothing is ever written.
// Fix: only take writer.mu around the closed check / queue mutation, never
// while waiting on the queue.
package b23centrifugewriter_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type byteQueue struct {
	mu     sync.RWMutex
	cond   *sync.Cond
	nodes  [][]byte
	size   int
	closed bool
}

func newByteQueue() *byteQueue {
	q := &byteQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *byteQueue) Add(b []byte) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.nodes = append(q.nodes, b)
	q.size += len(b)
	q.cond.Signal()
	q.mu.Unlock()
	return true
}

func (q *byteQueue) Remove() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.nodes) == 0 {
		return nil, false
	}
	b := q.nodes[0]
	q.nodes = q.nodes[1:]
	q.size -= len(b)
	return b, true
}

func (q *byteQueue) Wait() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.nodes) == 0 && !q.closed {
		q.cond.Wait()
	}
	return len(q.nodes) > 0
}

func (q *byteQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

func (q *byteQueue) Size() int {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return q.size
}

type writerConfig struct {
	MaxQueueSize       int
	WriteFn            func(data []byte) error
	WriteManyFn        func(data ...[]byte) error
	MaxMessagesInFrame int
}

type writer struct {
	mu       sync.Mutex
	config   writerConfig
	messages *byteQueue
	closed   bool
	sent     int
}

var errQueueFull = errors.New("client queue full")

func newWriter(config writerConfig) *writer {
	return &writer{config: config, messages: newByteQueue()}
}

func (w *writer) waitSendMessage() bool {
	if !w.messages.Wait() {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	msg, ok := w.messages.Remove()
	if !ok {
		return !w.closed
	}
	if err := w.config.WriteFn(msg); err != nil {
		return false
	}
	w.sent++
	return true
}

func (w *writer) run() {
	for {
		if ok := w.waitSendMessage(); !ok {
			return
		}
	}
}

func (w *writer) enqueue(data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("writer closed")
	}
	if w.config.MaxQueueSize > 0 && w.messages.Size()+len(data) > w.config.MaxQueueSize {
		return errQueueFull
	}
	w.messages.Add(data)
	return nil
}

func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.messages.Close()
}

func TestProbe(t *testing.T) {
	got := make(chan []byte, 1)
	w := newWriter(writerConfig{
		MaxQueueSize: 1024,
		WriteFn: func(data []byte) error {
			got <- data
			return nil
		},
	})
	go w.run()
	time.Sleep(50 * time.Millisecond)
	if err := w.enqueue([]byte(`{"push":{"channel":"news"}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case msg := <-got:
		t.Logf("written: %s", msg)
	case <-time.After(time.Minute):
		t.Fatal("message not written")
	}
	w.close()
}
