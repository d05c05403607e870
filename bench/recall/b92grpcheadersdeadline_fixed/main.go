// Project: grpc/grpc-go (internal/transport/http2_server.go), master after PR #8439, July 2025.
// Bug: http2Server.operateHeaders takes t.mu to register the new stream, and the early return added for requests whose grpc-timeout has already expired queues an earlyAbortStream and returns without t.mu.Unlock, so the next HEADERS frame handled by the same reader goroutine blocks on t.mu forever and the whole connection hangs (PR #8451 "transport: release mutex before returning on expired deadlines in server streams"; placement of the check approximate).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

const (
	reachable = iota
	closing
)

const statusOK = 200

type cbItem interface{ isTransportResponseFrame() bool }

type earlyAbortStream struct {
	httpStatus     uint32
	streamID       uint32
	contentSubtype string
	status         string
	rst            bool
}

func (*earlyAbortStream) isTransportResponseFrame() bool { return false }

type registerStream struct{ streamID uint32 }

func (*registerStream) isTransportResponseFrame() bool { return false }

// controlBuffer is the queue of control frames consumed by the loopy writer.
type controlBuffer struct {
	mu   sync.Mutex
	list []cbItem
}

func (c *controlBuffer) put(it cbItem) error {
	_, err := c.executeAndPut(nil, it)
	return err
}

func (c *controlBuffer) executeAndPut(f func() bool, it cbItem) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f != nil && !f() {
		return false, nil
	}
	c.list = append(c.list, it)
	return true, nil
}

type ServerStream struct {
	id             uint32
	method         string
	contentSubtype string
	ctx            context.Context
	cancel         context.CancelFunc
}

type metaHeadersFrame struct {
	streamID  uint32
	method    string
	timeout   time.Duration
	hasTO     bool
	endStream bool
}

type http2Server struct {
	controlBuf    *controlBuffer
	mu            sync.Mutex // guard the following
	state         int
	activeStreams map[uint32]*ServerStream
	maxStreams    uint32
	idle          time.Time
}

func (t *http2Server) operateHeaders(ctx context.Context, frame *metaHeadersFrame, handle func(*ServerStream)) error {
	streamID := frame.streamID
	s := &ServerStream{id: streamID, method: frame.method, contentSubtype: "proto"}
	if frame.hasTO {
		s.ctx, s.cancel = context.WithTimeout(ctx, frame.timeout)
	} else {
		s.ctx, s.cancel = context.WithCancel(ctx)
	}

	t.mu.Lock()
	if t.state != reachable {
		t.mu.Unlock()
		s.cancel()
		return nil
	}
	if uint32(len(t.activeStreams)) >= t.maxStreams {
		t.mu.Unlock()
		s.cancel()
		return nil
	}
	if err := s.ctx.Err(); err != nil {
		t.mu.Unlock()
		// Early abort in case the timeout was zero or so low it already fired.
		t.controlBuf.put(&earlyAbortStream{
			httpStatus:     statusOK,
			streamID:       s.id,
			contentSubtype: s.contentSubtype,
			status:         "DeadlineExceeded: " + err.Error(),
			rst:            !frame.endStream,
		})
		return nil
	}
	t.activeStreams[streamID] = s
	if len(t.activeStreams) == 1 {
		t.idle = time.Time{}
	}
	t.mu.Unlock()
	// Register the stream with loopy.
	t.controlBuf.put(&registerStream{streamID: s.id})
	handle(s)
	return nil
}

func (t *http2Server) deleteStream(s *ServerStream) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.activeStreams, s.id)
	if len(t.activeStreams) == 0 {
		t.idle = time.Now()
	}
}

// HandleStreams receives incoming streams using the given handler.
func (t *http2Server) HandleStreams(ctx context.Context, frames []*metaHeadersFrame, handle func(*ServerStream)) {
	for _, frame := range frames {
		if err := t.operateHeaders(ctx, frame, handle); err != nil {
			fmt.Println("protocol error:", err)
		}
	}
}

func main() {
	t := &http2Server{
		controlBuf:    &controlBuffer{},
		state:         reachable,
		activeStreams: make(map[uint32]*ServerStream),
		maxStreams:    100,
	}
	frames := []*metaHeadersFrame{
		{streamID: 1, method: "/pkg.Svc/Unary", hasTO: true, timeout: 0, endStream: true},
		{streamID: 3, method: "/pkg.Svc/Unary", endStream: true},
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the server transport's reader goroutine
		defer wg.Done()
		t.HandleStreams(context.Background(), frames, func(s *ServerStream) {
			fmt.Println("handling stream", s.id, s.method)
			s.cancel()
			t.deleteStream(s)
		})
	}()
	wg.Wait()
	fmt.Println("done, control frames queued:", len(t.controlBuf.list))
}
