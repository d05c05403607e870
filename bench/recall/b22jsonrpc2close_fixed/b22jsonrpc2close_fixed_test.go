// Project: sourcegraph/jsonrpc2
// Bug: Conn.send holds c.sending for the whole write and, when WriteObject
//      fails, takes c.mu to drop the call from c.pending. When the read loop
//      hits a stream error it calls c.close(), which took c.mu first and then
//      c.sending to wait for in-flight writes: an AB/BA inversion between the
//      writer goroutine and readMessages.
// Fix: close acquires c.sending before c.mu, the same order as send.

package b22jsonrpc2close_fixed

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"
)

var ErrClosed = errors.New("jsonrpc2: connection is closed")

type ID struct{ Num uint64 }

type Request struct {
	Method string           `json:"method"`
	Params *json.RawMessage `json:"params,omitempty"`
	ID     ID               `json:"id"`
}

type Response struct {
	ID     ID               `json:"id"`
	Result *json.RawMessage `json:"result,omitempty"`
}

type ObjectStream interface {
	WriteObject(obj interface{}) error
	ReadObject(v interface{}) error
	io.Closer
}

type Handler interface {
	Handle(ctx context.Context, conn *Conn, req *Request)
}

type call struct {
	request  *Request
	response *Response
	seq      uint64
	done     chan error
}

type Conn struct {
	stream     ObjectStream
	h          Handler
	mu         sync.Mutex
	shutdown   bool
	closing    bool
	seq        uint64
	pending    map[ID]*call
	sending    sync.Mutex
	disconnect chan struct{}
	logf       func(format string, v ...interface{})
}

func NewConn(ctx context.Context, stream ObjectStream, h Handler) *Conn {
	c := &Conn{stream: stream, h: h, pending: map[ID]*call{}, disconnect: make(chan struct{}),
		logf: func(string, ...interface{}) {}}
	go c.readMessages(ctx)
	return c
}

func (c *Conn) DisconnectNotify() <-chan struct{} { return c.disconnect }

func (c *Conn) Close() error { return c.close(nil) }

func (c *Conn) close(cause error) error {
	c.sending.Lock()
	defer c.sending.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()

	if c.closing {
		return ErrClosed
	}
	for _, call := range c.pending {
		close(call.done)
	}
	if cause != nil && cause != io.EOF {
		c.logf("jsonrpc2: protocol error: %v", cause)
	}
	close(c.disconnect)
	c.closing = true
	return c.stream.Close()
}

func (c *Conn) send(_ context.Context, req *Request, wait bool) (cc *call, err error) {
	c.sending.Lock()
	defer c.sending.Unlock()

	var id ID
	c.mu.Lock()
	if c.shutdown || c.closing {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if wait {
		id = ID{Num: c.seq}
		req.ID = id
		cc = &call{request: req, seq: c.seq, done: make(chan error, 1)}
		c.pending[id] = cc
		c.seq++
	}
	c.mu.Unlock()

	defer func() {
		if err != nil && wait {
			c.mu.Lock()
			delete(c.pending, id)
			c.mu.Unlock()
		}
	}()

	if err := c.stream.WriteObject(req); err != nil {
		return nil, err
	}
	return cc, nil
}

func (c *Conn) Call(ctx context.Context, method string, params, result interface{}) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	msg := json.RawMessage(raw)
	cc, err := c.send(ctx, &Request{Method: method, Params: &msg}, true)
	if err != nil {
		return err
	}
	select {
	case err, ok := <-cc.done:
		if !ok {
			return ErrClosed
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(*cc.response.Result, result)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Conn) readMessages(ctx context.Context) {
	var err error
	for err == nil {
		var resp Response
		err = c.stream.ReadObject(&resp)
		if err != nil {
			break
		}
		c.mu.Lock()
		cc := c.pending[resp.ID]
		delete(c.pending, resp.ID)
		c.mu.Unlock()
		if cc != nil {
			cc.response = &resp
			cc.done <- nil
		}
	}
	c.close(err)
}

type brokenPipeStream struct{}

func (brokenPipeStream) WriteObject(obj interface{}) error {
	time.Sleep(60 * time.Millisecond)
	return io.ErrClosedPipe
}

func (brokenPipeStream) ReadObject(v interface{}) error {
	time.Sleep(20 * time.Millisecond)
	return io.ErrUnexpectedEOF
}

func (brokenPipeStream) Close() error { return nil }

func TestProbe(t *testing.T) {
	ctx := context.Background()
	conn := NewConn(ctx, brokenPipeStream{}, nil)
	conn.logf = t.Logf

	var hover json.RawMessage
	err := conn.Call(ctx, "textDocument/hover", map[string]int{"line": 3}, &hover)
	if !errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, ErrClosed) {
		t.Fatalf("call err = %v", err)
	}
	select {
	case <-conn.DisconnectNotify():
	case <-time.After(5 * time.Second):
		t.Fatal("connection never disconnected")
	}
}
