// Project: grpc/grpc-go (internal/transport/http2_client.go, controlbuf.go), v1.49.0
// Issue: grpc/grpc-go#5644 "Deadlock on grpc transport" (regression from PR #5494),
// fixed by PR #5652 "transport: Fix deadlock in transport caused by GOAWAY
// race with new stream creation".
//
// PR #5494 moved the registration of a new stream into the activeStreams map
// into NewStream's checkForStreamQuota closure. That closure is handed to
// controlBuffer.executeAndPut, which runs it while holding controlBuf.mu, and it
// takes t.mu (line 206) - the order controlBuf.mu -> t.mu.
// handleGoAway, run by the reader goroutine, holds t.mu while it closes every
// stream the server did not process; closeStream gives the stream quota back
// through controlBuf.executeAndPut, which takes controlBuf.mu (line 110) - the
// order t.mu -> controlBuf.mu (the field comment even says "Do not access
// controlBuf with mu held").
// An RPC creating a stream while the second GOAWAY arrives: the RPC goroutine
// holds controlBuf.mu and blocks on t.mu (line 206); the reader holds t.mu and
// blocks on controlBuf.mu (line 110). Both block forever.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

type transportState int

const (
	reachable transportState = iota
	closing
	draining
)

type streamState uint32

const (
	streamActive streamState = iota
	streamDone
)

var errStreamDrain = errors.New("the connection is draining")

type recvMsg struct{ err error }

// recvBuffer is the stream's unbounded buffer of received messages.
type recvBuffer struct {
	c       chan recvMsg
	mu      sync.Mutex
	backlog []recvMsg
}

func newRecvBuffer() *recvBuffer { return &recvBuffer{c: make(chan recvMsg, 1)} }

func (b *recvBuffer) put(r recvMsg) {
	b.mu.Lock()
	if len(b.backlog) == 0 {
		select {
		case b.c <- r:
			b.mu.Unlock()
			return
		default:
		}
	}
	b.backlog = append(b.backlog, r)
	b.mu.Unlock()
}

func (b *recvBuffer) get() <-chan recvMsg { return b.c }

// ---- controlbuf.go ----

type cbItem interface{ isTransportResponseFrame() bool }

type headerFrame struct{ streamID uint32 }

func (*headerFrame) isTransportResponseFrame() bool { return false }

type cleanupStream struct {
	streamID uint32
	onWrite  func()
}

func (*cleanupStream) isTransportResponseFrame() bool { return false }

type incomingGoAway struct{}

func (*incomingGoAway) isTransportResponseFrame() bool { return false }

type controlBuffer struct {
	ch              chan struct{}
	mu              sync.Mutex
	consumerWaiting bool
	list            []cbItem
	err             error
}

func newControlBuffer() *controlBuffer { return &controlBuffer{ch: make(chan struct{}, 1)} }

func (c *controlBuffer) put(it cbItem) error {
	_, err := c.executeAndPut(nil, it)
	return err
}

// executeAndPut runs f under c.mu and enqueues it only if f returns true.
func (c *controlBuffer) executeAndPut(f func(it interface{}) bool, it cbItem) (bool, error) {
	var wakeUp bool
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return false, c.err
	}
	if f != nil {
		if !f(it) { // f wasn't successful
			c.mu.Unlock()
			return false, nil
		}
	}
	if c.consumerWaiting {
		wakeUp = true
		c.consumerWaiting = false
	}
	c.list = append(c.list, it)
	c.mu.Unlock()
	if wakeUp {
		select {
		case c.ch <- struct{}{}:
		default:
		}
	}
	return true, nil
}

// ---- http2_client.go ----

type Stream struct {
	id          uint32
	state       uint32
	unprocessed uint32
	done        chan struct{}
	buf         *recvBuffer
}

func (s *Stream) swapState(st streamState) streamState {
	return streamState(atomic.SwapUint32(&s.state, uint32(st)))
}

func (s *Stream) write(m recvMsg) { s.buf.put(m) }

type GoAwayFrame struct{ LastStreamID uint32 }

type GoAwayReason uint8

type http2Client struct {
	goAway chan struct{}
	// controlBuf delivers all the control related tasks to the loopy writer.
	controlBuf *controlBuffer

	streamQuota           int64
	streamsQuotaAvailable chan struct{}
	waitingStreams        uint32
	nextID                uint32

	// Do not access controlBuf with mu held.
	mu            sync.Mutex // guard the following variables
	state         transportState
	activeStreams map[uint32]*Stream
	prevGoAwayID  uint32
	goAwayReason  GoAwayReason

	onGoAway func(GoAwayReason)

	// test harness only: lets the RPC goroutine sit inside the quota check
	// until the reader has handled the second GOAWAY.
	inQuotaCheck chan struct{}
	streamClosed chan struct{}
}

func (t *http2Client) NewStream(ctx context.Context) (*Stream, error) {
	s := &Stream{done: make(chan struct{}), buf: newRecvBuffer()}
	hdr := &headerFrame{}
	firstTry := true
	var ch chan struct{}
	checkForStreamQuota := func(it interface{}) bool {
		if t.streamQuota <= 0 { // Can go negative if server decreases it.
			if firstTry {
				t.waitingStreams++
			}
			ch = t.streamsQuotaAvailable
			return false
		}
		if !firstTry {
			t.waitingStreams--
		}
		t.streamQuota--
		h := it.(*headerFrame)
		h.streamID = t.nextID
		t.nextID += 2
		s.id = h.streamID

		close(t.inQuotaCheck) // harness
		<-t.streamClosed      // harness

		t.mu.Lock()
		if t.activeStreams == nil { // Can be niled from Close().
			t.mu.Unlock()
			return false // Don't create a stream if the transport is already closed.
		}
		t.activeStreams[s.id] = s
		t.mu.Unlock()
		if t.streamQuota > 0 && t.waitingStreams > 0 {
			select {
			case t.streamsQuotaAvailable <- struct{}{}:
			default:
			}
		}
		return true
	}
	checkForHeaderListSize := func(it interface{}) bool { return true }
	for {
		success, err := t.controlBuf.executeAndPut(func(it interface{}) bool {
			return checkForHeaderListSize(it) && checkForStreamQuota(it)
		}, hdr)
		if err != nil {
			return nil, err
		}
		if success {
			break
		}
		firstTry = false
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.goAway:
			return nil, errStreamDrain
		}
	}
	return s, nil
}

func (t *http2Client) closeStream(s *Stream, err error) {
	// Set stream status to done.
	if s.swapState(streamDone) == streamDone {
		<-s.done
		return
	}
	if err != nil {
		// This will unblock reads eventually.
		s.write(recvMsg{err: err})
	}
	cleanup := &cleanupStream{
		streamID: s.id,
		onWrite: func() {
			t.mu.Lock()
			if t.activeStreams != nil {
				delete(t.activeStreams, s.id)
			}
			t.mu.Unlock()
		},
	}
	addBackStreamQuota := func(interface{}) bool {
		t.streamQuota++
		if t.streamQuota > 0 && t.waitingStreams > 0 {
			select {
			case t.streamsQuotaAvailable <- struct{}{}:
			default:
			}
		}
		return true
	}
	t.controlBuf.executeAndPut(addBackStreamQuota, cleanup)
	// This will unblock write.
	close(s.done)
}

func (t *http2Client) handleGoAway(f *GoAwayFrame) {
	t.mu.Lock()
	if t.state == closing {
		t.mu.Unlock()
		return
	}
	id := f.LastStreamID
	if id > 0 && id%2 == 0 {
		t.mu.Unlock()
		return
	}
	// The first GoAway is sent with an ID of MaxInt32 and the second one,
	// an RTT later, with the ID of the last stream the server will process.
	select {
	case <-t.goAway: // t.goAway has been closed (i.e., multiple GoAways).
		if id > t.prevGoAwayID {
			t.mu.Unlock()
			return
		}
	default:
		close(t.goAway)
		t.controlBuf.put(&incomingGoAway{})
		t.onGoAway(t.goAwayReason)
		t.state = draining
	}
	// All streams with IDs greater than the GoAwayId
	// and smaller than the previous GoAway ID should be killed.
	upperLimit := t.prevGoAwayID
	if upperLimit == 0 { // This is the first GoAway Frame.
		upperLimit = math.MaxUint32 // Kill all streams after the GoAway ID.
	}
	for streamID, stream := range t.activeStreams {
		if streamID > id && streamID <= upperLimit {
			// The stream was unprocessed by the server.
			atomic.StoreUint32(&stream.unprocessed, 1)
			t.closeStream(stream, errStreamDrain)
		}
	}
	t.prevGoAwayID = id
	t.mu.Unlock()
}

func main() {
	t := &http2Client{
		goAway:                make(chan struct{}),
		controlBuf:            newControlBuffer(),
		streamQuota:           100,
		streamsQuotaAvailable: make(chan struct{}, 1),
		nextID:                5,
		activeStreams:         make(map[uint32]*Stream),
		onGoAway:              func(GoAwayReason) {},
		inQuotaCheck:          make(chan struct{}),
		streamClosed:          make(chan struct{}),
	}
	s1 := &Stream{id: 1, done: make(chan struct{}), buf: newRecvBuffer()}
	s3 := &Stream{id: 3, done: make(chan struct{}), buf: newRecvBuffer()}
	t.activeStreams[1] = s1
	t.activeStreams[3] = s3

	// First GOAWAY (MaxInt32): the transport starts draining, nothing is closed.
	t.handleGoAway(&GoAwayFrame{LastStreamID: math.MaxInt32})

	// The RPC of stream 3 waits for its response; it gets the drain error.
	go func() {
		m := <-s3.buf.get()
		fmt.Println("stream 3:", m.err)
		close(t.streamClosed)
	}()

	var wg sync.WaitGroup
	wg.Add(2)
	// An RPC that had already picked this transport creates stream 5.
	go func() {
		defer wg.Done()
		s, err := t.NewStream(context.Background())
		if err == nil {
			fmt.Println("created stream", s.id)
		}
	}()
	<-t.inQuotaCheck
	// The reader goroutine gets the second GOAWAY: only stream 1 was processed.
	go func() {
		defer wg.Done()
		t.handleGoAway(&GoAwayFrame{LastStreamID: 1})
	}()
	wg.Wait()
	fmt.Println("done")
}
