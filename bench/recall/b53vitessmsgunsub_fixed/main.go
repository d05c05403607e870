// Fixed twin (streamMu is always taken before mu, as in vitessio/vitess#10132).
// Project: vitessio/vitess v13/v14 (the message manager's "0 receivers" behavior).
// Files: go/vt/vttablet/tabletserver/messager/message_manager.go (messageManager.Subscribe,
// messageManager.unsubscribe, messageManager.stopVStream, messageManager.runPoller,
// messageManager.readPending; the poller is driven by a vitess timer.Timer).
// PR: vitessio/vitess#10132 "Avoid deadlocks related to 0 receiver behavior".
//
// A messageManager has a main mutex mu (receivers, cache bookkeeping) and a stream mutex streamMu
// that keeps the cache and the database consistent (vstream/vcopy against the poller). When the last
// receiver goes away, the manager stops its vstream: unsubscribe holds mu, removes the receiver and,
// seeing zero receivers, calls stopVStream, which takes streamMu. The poller does it the other way
// round: runPoller checks that there are receivers, takes streamMu, reads the pending messages from
// MySQL, and then takes mu to verify the receivers again and fill the cache. If a client's stream
// ends (its context is cancelled) while the poller is reading, unsubscribe waits for streamMu holding
// mu and the poller waits for mu holding streamMu; the messager table stops delivering for good. The
// fix always takes the two mutexes in streamMu-then-mu order (getExclusiveLock) and rechecks the
// receiver count under both.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Result struct{ Rows [][]string }

type receiverWithStatus struct {
	send func(*Result) error
	busy bool
}

type cache struct {
	mu   sync.Mutex
	rows map[string]bool
}

func (c *cache) Add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rows[id] = true
}

// Timer is go/vt/timer.Timer: it runs the function in its own goroutine.
type Timer struct{ trigger chan struct{} }

func (t *Timer) Start(keephouse func()) {
	go func() {
		for range t.trigger {
			keephouse()
		}
	}()
}

func (t *Timer) Trigger() { t.trigger <- struct{}{} }

type messageManager struct {
	name string

	// mu is the main mutex. It protects everything except streamCancel.
	mu          sync.Mutex
	receivers   []*receiverWithStatus
	curReceiver int
	cache       *cache

	// streamMu keeps the cache and database consistent with each other.
	streamMu     sync.Mutex
	streamCancel func()

	pollerTicks *Timer
	readLatency time.Duration
}

// Subscribe registers the send function as a receiver of messages.
func (mm *messageManager) Subscribe(ctx context.Context, send func(*Result) error) <-chan struct{} {
	receiver := &receiverWithStatus{send: send}
	done := make(chan struct{})
	mm.mu.Lock()
	mm.receivers = append(mm.receivers, receiver)
	if len(mm.receivers) == 1 {
		_, mm.streamCancel = context.WithCancel(context.Background()) // startVStream
	}
	mm.mu.Unlock()
	go func() {
		<-ctx.Done()
		mm.unsubscribe(receiver)
		close(done)
	}()
	return done
}

// getExclusiveLock grants the caller exclusive access to the message service.
// The mutexes are always taken in stream mutex, main mutex order.
func (mm *messageManager) getExclusiveLock() {
	mm.streamMu.Lock()
	mm.mu.Lock()
}

func (mm *messageManager) releaseExclusiveLock() {
	mm.mu.Unlock()
	mm.streamMu.Unlock()
}

func (mm *messageManager) unsubscribe(receiver *receiverWithStatus) {
	// We may need to stop the vstream, which needs the stream mutex.
	mm.getExclusiveLock()
	defer mm.releaseExclusiveLock()
	for i, rcv := range mm.receivers {
		if rcv != receiver {
			continue
		}
		mm.receivers = append(mm.receivers[:i], mm.receivers[i+1:]...)
		break
	}
	if mm.curReceiver >= len(mm.receivers) {
		mm.curReceiver = 0
	}
	// If we're the last receiver, stop the vstream.
	if len(mm.receivers) == 0 {
		mm.stopVStream()
	}
}

// stopVStream must be called with streamMu held.
func (mm *messageManager) stopVStream() {
	if mm.streamCancel != nil {
		mm.streamCancel()
		mm.streamCancel = nil
	}
}

func (mm *messageManager) receiverCount() int {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	return len(mm.receivers)
}

func (mm *messageManager) runPoller() {
	// Fast-path. Skip all the work.
	if mm.receiverCount() == 0 {
		return
	}
	mm.streamMu.Lock()
	defer mm.streamMu.Unlock()

	qr, err := mm.readPending(context.Background())
	if err != nil {
		return
	}

	// Obtain mu lock to verify and preserve that we still have receivers.
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if len(mm.receivers) == 0 {
		return
	}
	for _, row := range qr.Rows {
		mm.cache.Add(row[0])
	}
}

// readPending runs "select ... from msg where time_next < :time_next order by priority, time_next limit :max".
func (mm *messageManager) readPending(ctx context.Context) (*Result, error) {
	time.Sleep(mm.readLatency) // MySQL round trip
	return &Result{Rows: [][]string{{"1"}, {"2"}}}, nil
}

func main() {
	mm := &messageManager{name: "msg", cache: &cache{rows: map[string]bool{}},
		pollerTicks: &Timer{trigger: make(chan struct{})}, readLatency: 100 * time.Millisecond}
	polled := make(chan struct{})
	mm.pollerTicks.Start(func() { mm.runPoller(); polled <- struct{}{} })

	// A vtgate stream subscribes to the message table.
	ctx, cancel := context.WithCancel(context.Background())
	done := mm.Subscribe(ctx, func(*Result) error { return nil })

	mm.pollerTicks.Trigger() // poll interval elapses
	time.Sleep(30 * time.Millisecond)
	cancel() // the client disconnects while the poller reads MySQL

	<-done
	<-polled
	fmt.Println("receivers:", mm.receiverCount(), "cached:", len(mm.cache.rows))
}
