// Project: lucas-clemente/quic-go (internal/flowcontrol/stream_flow_controller.go, window_update_queue.go), v0.7/v0.8, 2018 (approximate).
// Bug: streamFlowController.MaybeQueueWindowUpdate held the flow controller mutex while calling its queueWindowUpdate
// callback, which ends in windowUpdateQueue.AddStream (queue mutex); the session's send loop runs windowUpdateQueue.QueueAll,
// which holds the queue mutex and asks each stream for str.getWindowUpdate (flow controller mutex), an AB-BA deadlock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type StreamID uint64
type ByteCount int64

type wireFrame interface{ frameName() string }

type MaxStreamDataFrame struct {
	StreamID   StreamID
	ByteOffset ByteCount
}

func (*MaxStreamDataFrame) frameName() string { return "MAX_STREAM_DATA" }

type baseFlowController struct {
	mutex             sync.Mutex
	bytesRead         ByteCount
	highestReceived   ByteCount
	receiveWindow     ByteCount
	receiveWindowSize ByteCount
}

func (c *baseFlowController) AddBytesRead(n ByteCount) {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	c.bytesRead += n
}

func (c *baseFlowController) hasWindowUpdate() bool {
	bytesRemaining := c.receiveWindow - c.bytesRead
	return bytesRemaining <= c.receiveWindowSize*3/4
}

func (c *baseFlowController) getWindowUpdate() ByteCount {
	if !c.hasWindowUpdate() {
		return 0
	}
	c.receiveWindow = c.bytesRead + c.receiveWindowSize
	return c.receiveWindow
}

type streamFlowController struct {
	baseFlowController
	streamID            StreamID
	queueWindowUpdate   func()
	receivedFinalOffset bool
}

// MaybeQueueWindowUpdate (buggy): the callback runs with c.mutex held.
func (c *streamFlowController) MaybeQueueWindowUpdate() {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	hasWindowUpdate := !c.receivedFinalOffset && c.hasWindowUpdate()
	if hasWindowUpdate {
		c.queueWindowUpdate()
	}
}

func (c *streamFlowController) GetWindowUpdate() ByteCount {
	c.mutex.Lock()
	if c.receivedFinalOffset {
		c.mutex.Unlock()
		return 0
	}
	offset := c.baseFlowController.getWindowUpdate()
	c.mutex.Unlock()
	return offset
}

type streamSender interface {
	onHasStreamWindowUpdate(StreamID)
}

type receiveStream struct {
	mutex          sync.Mutex
	streamID       StreamID
	sender         streamSender
	flowController *streamFlowController
	readPosInFrame int
}

func newReceiveStream(id StreamID, sender streamSender) *receiveStream {
	s := &receiveStream{streamID: id, sender: sender}
	s.flowController = &streamFlowController{
		streamID:           id,
		baseFlowController: baseFlowController{receiveWindow: 100, receiveWindowSize: 100},
		queueWindowUpdate:  func() { sender.onHasStreamWindowUpdate(id) },
	}
	return s
}

func (s *receiveStream) Read(n int) {
	s.mutex.Lock()
	s.readPosInFrame += n
	s.mutex.Unlock()
	s.flowController.AddBytesRead(ByteCount(n))
	// increase the flow control window, if necessary
	s.flowController.MaybeQueueWindowUpdate()
}

func (s *receiveStream) getWindowUpdate() ByteCount {
	return s.flowController.GetWindowUpdate()
}

type streamsMap struct {
	mutex   sync.RWMutex
	streams map[StreamID]*receiveStream
}

func (m *streamsMap) GetOrOpenReceiveStream(id StreamID) (*receiveStream, error) {
	m.mutex.RLock()
	defer m.mutex.RUnlock()
	return m.streams[id], nil
}

type windowUpdateQueue struct {
	mutex        sync.Mutex
	queue        map[StreamID]bool // used as a set
	streamGetter *streamsMap
	callback     func(wireFrame)
}

func (q *windowUpdateQueue) AddStream(id StreamID) {
	q.mutex.Lock()
	q.queue[id] = true
	q.mutex.Unlock()
}

func (q *windowUpdateQueue) QueueAll() {
	q.mutex.Lock()
	for id := range q.queue {
		str, err := q.streamGetter.GetOrOpenReceiveStream(id)
		if err != nil || str == nil { // the stream can be nil if it was completed before dequeing the window update
			continue
		}
		offset := str.getWindowUpdate()
		if offset == 0 {
			continue
		}
		q.callback(&MaxStreamDataFrame{StreamID: id, ByteOffset: offset})
	}
	q.queue = make(map[StreamID]bool)
	q.mutex.Unlock()
}

type session struct {
	streamsMap        *streamsMap
	windowUpdateQueue *windowUpdateQueue
	framerMu          sync.Mutex
	controlFrames     int
}

func (s *session) onHasStreamWindowUpdate(id StreamID) {
	s.windowUpdateQueue.AddStream(id)
}

func (s *session) queueControlFrame(f wireFrame) {
	s.framerMu.Lock()
	s.controlFrames++
	s.framerMu.Unlock()
}

func main() {
	sess := &session{streamsMap: &streamsMap{streams: map[StreamID]*receiveStream{}}}
	sess.windowUpdateQueue = &windowUpdateQueue{queue: map[StreamID]bool{}, streamGetter: sess.streamsMap, callback: sess.queueControlFrame}
	str := newReceiveStream(4, sess)
	sess.streamsMap.streams[4] = str

	var readerDone atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // application reading from the stream
		defer wg.Done()
		for i := 0; i < 1000000; i++ {
			str.Read(60)
		}
		readerDone.Store(true)
	}()
	go func() { // session run loop packing packets
		defer wg.Done()
		for !readerDone.Load() {
			sess.windowUpdateQueue.QueueAll()
		}
	}()
	wg.Wait()
	fmt.Println("done, control frames queued:", sess.controlFrames)
}
