// Project: apache/dubbo-go v1.1 (June 2019), files protocol/dubbo/readwriter.go
// (RpcClientPackageHandler.Read), protocol/dubbo/codec.go
// (DubboPackage.Unmarshal) and protocol/dubbo/client.go (Client.transfer,
// addPendingResponse, GetPendingResponse), on top of dubbogo/getty.
// Issue: apache/dubbo-go#101 "Benchmark test problem" (frequent 'read tcp
// io timeout' under concurrency; regression from PR #83 "add
// Client.GetPendingResponse to limit the lock scope"), fixed by PR
// apache/dubbo-go#106 "Fix:Lock bug".
//
// getty's read loop hands every frame to the client's ReadWriter.
// RpcClientPackageHandler.Read read-locks c.pendingLock (line 174) and
// calls DubboPackage.Unmarshal with the client as an option; for a response
// Unmarshal looks the pending call up through client.GetPendingResponse,
// which read-locks c.pendingLock again (line 163). Under load another
// caller's transfer -> addPendingResponse queues pendingLock.Lock()
// (line 149) between the two read locks: the inner RLock waits for the
// writer, the writer waits for the outer RLock, and the session's read loop
// and every new call hang until the request timeout. The fix replaces the
// locked map with a sync.Map and drops the lock from Read.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// ---- getty stand-ins ----

type Session interface {
	WritePkg(pkg interface{}, timeout time.Duration) error
}

type ReadWriter interface {
	Read(Session, []byte) (interface{}, int, error)
	Write(Session, interface{}) error
}

type EventListener interface {
	OnMessage(Session, interface{})
}

type session struct {
	pkgHandler ReadWriter
	listener   EventListener
	wire       chan []byte // frames to the peer
	incoming   chan []byte // frames from the peer
}

func (s *session) WritePkg(pkg interface{}, timeout time.Duration) error {
	return s.pkgHandler.Write(s, pkg)
}

func (s *session) WriteBytes(b []byte) error { s.wire <- b; return nil }

// handleLoop is getty's per-session read loop.
func (s *session) handleLoop() {
	for data := range s.incoming {
		pkg, _, err := s.pkgHandler.Read(s, data)
		if err == nil {
			s.listener.OnMessage(s, pkg)
		}
	}
}

// ---- protocol/dubbo ----

type SequenceType int64

type DubboHeader struct {
	ID       int64
	Response bool
}

type DubboPackage struct {
	Header DubboHeader
	Body   interface{}
	Err    error
}

func (p *DubboPackage) Marshal() *bytes.Buffer {
	buf := new(bytes.Buffer)
	_ = binary.Write(buf, binary.BigEndian, p.Header)
	buf.WriteString(fmt.Sprint(p.Body))
	return buf
}

func (p *DubboPackage) Unmarshal(buf *bytes.Buffer, opts ...interface{}) error {
	if err := binary.Read(buf, binary.BigEndian, &p.Header); err != nil { // read header
		return err
	}
	// hessian decoding under load
	time.Sleep(100 * time.Millisecond)
	if len(opts) != 0 { // for client
		client := opts[0].(*Client)
		pendingRsp := client.GetPendingResponse(SequenceType(p.Header.ID))
		if pendingRsp == nil {
			return fmt.Errorf("client.GetPendingResponse(%v) = nil", p.Header.ID)
		}
		p.Body = pendingRsp.reply
	}
	*p.Body.(*string) = buf.String() // read body
	return nil
}

type PendingResponse struct {
	seq   uint64
	err   error
	reply interface{}
	done  chan struct{}
}

type Client struct {
	sequence         atomic.Uint64
	session          *session
	pendingResponses *sync.Map // Fix (#106): was pendingLock + map
}

func (c *Client) Call(method string, reply *string) error {
	p := &DubboPackage{Body: method}
	rsp := &PendingResponse{reply: reply, done: make(chan struct{})}
	if err := c.transfer(c.session, p, rsp); err != nil {
		return err
	}
	select {
	case <-time.After(5 * time.Second):
		c.removePendingResponse(SequenceType(rsp.seq))
		return errors.New("read tcp io timeout")
	case <-rsp.done:
		return rsp.err
	}
}

func (c *Client) transfer(session Session, pkg *DubboPackage, rsp *PendingResponse) error {
	sequence := c.sequence.Add(1)
	pkg.Header.ID = int64(sequence)
	rsp.seq = sequence
	c.addPendingResponse(rsp)
	return session.WritePkg(pkg, time.Second)
}

func (c *Client) addPendingResponse(pr *PendingResponse) {
	c.pendingResponses.Store(SequenceType(pr.seq), pr)
}

func (c *Client) removePendingResponse(seq SequenceType) *PendingResponse {
	if presp, ok := c.pendingResponses.Load(seq); ok {
		c.pendingResponses.Delete(seq)
		return presp.(*PendingResponse)
	}
	return nil
}

func (c *Client) GetPendingResponse(seq SequenceType) *PendingResponse {
	if presp, ok := c.pendingResponses.Load(seq); ok {
		return presp.(*PendingResponse)
	}
	return nil
}

// RpcClientPackageHandler is the client's getty ReadWriter (readwriter.go).
type RpcClientPackageHandler struct {
	client *Client
}

func (p *RpcClientPackageHandler) Read(ss Session, data []byte) (interface{}, int, error) {
	pkg := &DubboPackage{}
	if err := pkg.Unmarshal(bytes.NewBuffer(data), p.client); err != nil {
		pkg.Err = err // client will get this err
	}
	return pkg, len(data), nil
}

func (p *RpcClientPackageHandler) Write(ss Session, pkg interface{}) error {
	return ss.(*session).WriteBytes(pkg.(*DubboPackage).Marshal().Bytes())
}

// RpcClientHandler is the client's getty EventListener (listener.go).
type RpcClientHandler struct {
	client *Client
}

func (h *RpcClientHandler) OnMessage(session Session, pkg interface{}) {
	p := pkg.(*DubboPackage)
	pendingResponse := h.client.removePendingResponse(SequenceType(p.Header.ID))
	if pendingResponse == nil {
		return
	}
	pendingResponse.err = p.Err
	close(pendingResponse.done)
}

// provider answers every request frame with a response frame.
func provider(wire <-chan []byte, back chan<- []byte) {
	for req := range wire {
		p := &DubboPackage{}
		_ = binary.Read(bytes.NewBuffer(req), binary.BigEndian, &p.Header)
		p.Header.Response, p.Body = true, "hello"
		back <- p.Marshal().Bytes()
	}
}

func main() {
	c := &Client{pendingResponses: new(sync.Map)}
	c.session = &session{wire: make(chan []byte, 8), incoming: make(chan []byte, 8),
		pkgHandler: &RpcClientPackageHandler{client: c}, listener: &RpcClientHandler{client: c}}
	go provider(c.session.wire, c.session.incoming)
	go c.session.handleLoop()

	results := make(chan string, 2)
	for i := 0; i < 2; i++ {
		go func(i int) {
			time.Sleep(time.Duration(i) * 50 * time.Millisecond)
			var reply string
			err := c.Call("SayHello", &reply)
			results <- fmt.Sprintf("call %d: %q %v", i, reply, err)
		}(i)
	}
	for i := 0; i < 2; i++ {
		select {
		case r := <-results:
			fmt.Println(r)
		case <-time.After(2 * time.Second):
			fmt.Println("DEADLOCK")
			os.Exit(2)
		}
	}
}
