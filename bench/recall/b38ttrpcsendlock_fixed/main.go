// Project: containerd/ttrpc (client.go, channel.go, stream.go), v1.2.x, the RPC
// framework containerd uses to talk to its shims.
// PR #168 "client: Fix deadlock when writing to pipe blocks" (follow-up of
// issue #72), released in ttrpc v1.2.4.
//
// Client.createStream takes streamLock to allocate the stream ID and then,
// still holding streamLock, takes sendLock (line 126) before writing the
// request to the connection. The receive loop needs streamLock.RLock in
// getStream (line 152) for every response it reads. When the server stops
// reading requests because the client has not drained its responses (a slow
// consumer of a streaming RPC), one caller blocks in the pipe write holding
// sendLock, a second caller holds streamLock while waiting for sendLock, and
// the receive loop - the only goroutine that could drain the pipe and let the
// server read again - waits for streamLock. Every RPC on the connection hangs.
// The fix takes sendLock first and releases streamLock before writing.
// FIXED TWIN of b38ttrpcsendlock: createStream takes sendLock first and releases streamLock before writing.
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

type messageType uint8

const (
	messageTypeRequest  messageType = 0x1
	messageTypeResponse messageType = 0x2
	messageTypeData     messageType = 0x3
	messageHeaderLength             = 10
)

type messageHeader struct {
	Length   uint32
	StreamID uint32
	Type     messageType
	Flags    uint8
}

// channel reads and writes framed messages on a connection.
type channel struct {
	bw *bufio.Writer
	br *bufio.Reader
}

func newChannel(conn net.Conn) *channel {
	return &channel{bw: bufio.NewWriter(conn), br: bufio.NewReader(conn)}
}

func (ch *channel) recv() (messageHeader, []byte, error) {
	var hb [messageHeaderLength]byte
	if _, err := io.ReadFull(ch.br, hb[:]); err != nil {
		return messageHeader{}, nil, err
	}
	mh := messageHeader{Length: binary.BigEndian.Uint32(hb[:4]), StreamID: binary.BigEndian.Uint32(hb[4:8]),
		Type: messageType(hb[8]), Flags: hb[9]}
	p := make([]byte, mh.Length)
	_, err := io.ReadFull(ch.br, p)
	return mh, p, err
}

func (ch *channel) send(streamID uint32, t messageType, flags uint8, p []byte) error {
	var hb [messageHeaderLength]byte
	binary.BigEndian.PutUint32(hb[:4], uint32(len(p)))
	binary.BigEndian.PutUint32(hb[4:8], streamID)
	hb[8], hb[9] = byte(t), flags
	_, _ = ch.bw.Write(hb[:])
	_, _ = ch.bw.Write(p)
	return ch.bw.Flush()
}

type streamID uint32

type streamMessage struct {
	header  messageHeader
	payload []byte
}

type stream struct {
	id   streamID
	recv chan *streamMessage
}

func newStream(id streamID) *stream {
	return &stream{id: id, recv: make(chan *streamMessage, 1)}
}

func (s *stream) receive(ctx context.Context, msg *streamMessage) error {
	select {
	case s.recv <- msg:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Client for a ttrpc server
type Client struct {
	channel *channel

	streamLock   sync.RWMutex
	streams      map[streamID]*stream
	nextStreamID streamID
	sendLock     sync.Mutex

	ctx context.Context
}

func NewClient(conn net.Conn) *Client {
	c := &Client{channel: newChannel(conn), streams: make(map[streamID]*stream), nextStreamID: 1, ctx: context.Background()}
	go c.receiveLoop()
	return c
}

func (c *Client) createStream(flags uint8, b []byte) (*stream, error) {
	// sendLock must be held across both allocation of the stream ID and sending it across the wire.
	// This ensures that new stream IDs sent on the wire are always increasing, which is a
	// requirement of the TTRPC protocol.
	c.sendLock.Lock()
	defer c.sendLock.Unlock()

	var s *stream
	func() {
		c.streamLock.Lock()
		defer c.streamLock.Unlock()

		s = newStream(c.nextStreamID)
		c.streams[s.id] = s
		c.nextStreamID = c.nextStreamID + 2
	}()

	if err := c.channel.send(uint32(s.id), messageTypeRequest, flags, b); err != nil {
		return s, err
	}
	return s, nil
}

func (c *Client) deleteStream(s *stream) {
	c.streamLock.Lock()
	delete(c.streams, s.id)
	c.streamLock.Unlock()
}

func (c *Client) getStream(sid streamID) *stream {
	c.streamLock.RLock()
	s := c.streams[sid]
	c.streamLock.RUnlock()
	return s
}

func (c *Client) receiveLoop() error {
	for {
		mh, b, err := c.channel.recv()
		if err != nil {
			return err
		}
		s := c.getStream(streamID(mh.StreamID))
		if s == nil {
			continue
		}
		if err := s.receive(c.ctx, &streamMessage{header: mh, payload: b}); err != nil {
			return err
		}
	}
}

// Call makes a unary request and waits for its response.
func (c *Client) Call(method string) (string, error) {
	s, err := c.createStream(0, []byte(method))
	if err != nil {
		return "", err
	}
	defer c.deleteStream(s)
	msg := <-s.recv
	return string(msg.payload), nil
}

// NewStream starts a server-streaming request; messages arrive on s.recv.
func (c *Client) NewStream(method string) (*stream, error) {
	return c.createStream(1, []byte(method))
}

// serve is the shim side: it reads one request, writes its response(s), then
// reads the next request; writes block until the client reads them.
func serve(conn net.Conn) {
	ch := newChannel(conn)
	for {
		mh, p, err := ch.recv()
		if err != nil {
			return
		}
		if mh.Flags == 1 { // streaming: the task's event backlog
			for i := 1; i <= 4; i++ {
				_ = ch.send(mh.StreamID, messageTypeData, 0, []byte(fmt.Sprintf("event-%d", i)))
			}
			continue
		}
		_ = ch.send(mh.StreamID, messageTypeResponse, 0, append([]byte("ok:"), p...))
	}
}

func main() {
	cconn, sconn := net.Pipe()
	go serve(sconn)
	c := NewClient(cconn)

	var wg sync.WaitGroup
	events, _ := c.NewStream("containerd.task.v2.Task/Events")
	wg.Add(1)
	go func() { // a slow consumer of the stream
		defer wg.Done()
		for i := 0; i < 4; i++ {
			time.Sleep(100 * time.Millisecond)
			<-events.recv
		}
	}()
	time.Sleep(20 * time.Millisecond)
	for _, m := range []string{"State", "Stats"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, _ := c.Call(m)
			fmt.Println(r)
		}()
		time.Sleep(20 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// net.Pipe keeps the runtime from detecting the deadlock: use a watchdog.
	select {
	case <-done:
		fmt.Println("ok")
	case <-time.After(2 * time.Second):
		fmt.Println("DEADLOCK")
		os.Exit(2)
	}
}
