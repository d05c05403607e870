// Project: nhooyr/websocket (coder/websocket)
// Bug: closeHandshake kept c.closeMu held while writing the close frame and waiting for the peer's close frame, but the CloseRead reader goroutine must take closeMu (setCloseErr / close) when that frame arrives before it can signal c.closed, so Close never returns.
// Fix: closeHandshake only marks wroteClose under closeMu (as writeClose does) and waits for the handshake with the lock released.
package b25nhooyrwsclose

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

type opcode int

const (
	opText  opcode = 1
	opClose opcode = 8
	opPing  opcode = 9
	opPong  opcode = 10
)

type StatusCode int

const (
	StatusNormalClosure StatusCode = 1000
	StatusGoingAway     StatusCode = 1001
)

func (c StatusCode) String() string { return fmt.Sprintf("StatusCode(%d)", int(c)) }

type CloseError struct {
	Code   StatusCode
	Reason string
}

func (ce CloseError) Error() string {
	return fmt.Sprintf("status = %v and reason = %q", ce.Code, ce.Reason)
}

func (ce CloseError) bytes() []byte {
	b := make([]byte, 2+len(ce.Reason))
	binary.BigEndian.PutUint16(b, uint16(ce.Code))
	copy(b[2:], ce.Reason)
	return b
}

func parseClosePayload(p []byte) (CloseError, error) {
	if len(p) < 2 {
		return CloseError{}, errors.New("close payload too small")
	}
	return CloseError{Code: StatusCode(binary.BigEndian.Uint16(p)), Reason: string(p[2:])}, nil
}

var errAlreadyWroteClose = errors.New("already wrote close")

type frame struct {
	op      opcode
	payload []byte
}

type memPipe struct {
	out chan frame
	in  chan frame
}

type Conn struct {
	rwc          *memPipe
	client       bool
	writeFrameMu sync.Mutex
	closeMu      sync.Mutex
	closeErr     error
	wroteClose   bool
	isClosed     bool
	closed       chan struct{}
	pingCounter  int
}

func newConn(rwc *memPipe, client bool) *Conn {
	return &Conn{rwc: rwc, client: client, closed: make(chan struct{})}
}

func (c *Conn) writeControl(op opcode, p []byte) error {
	c.writeFrameMu.Lock()
	defer c.writeFrameMu.Unlock()
	select {
	case c.rwc.out <- frame{op: op, payload: p}:
		return nil
	case <-c.closed:
		return errNetClosed
	}
}

var errNetClosed = errors.New("use of closed network connection")

func (c *Conn) setCloseErr(err error) {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closeErr == nil && err != nil {
		c.closeErr = fmt.Errorf("WebSocket closed: %w", err)
	}
}

func (c *Conn) close(err error) {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.isClosed {
		return
	}
	c.isClosed = true
	if c.closeErr == nil {
		c.closeErr = err
	}
	close(c.closed)
}

func (c *Conn) handleControl(f frame) error {
	switch f.op {
	case opPing:
		c.pingCounter++
		return c.writeControl(opPong, f.payload)
	case opPong:
		return nil
	}
	ce, err := parseClosePayload(f.payload)
	if err != nil {
		c.close(err)
		return err
	}
	err = fmt.Errorf("received close frame: %w", ce)
	c.setCloseErr(err)
	c.close(err)
	return err
}

func (c *Conn) CloseRead(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		for {
			select {
			case f := <-c.rwc.in:
				if f.op >= opClose {
					if err := c.handleControl(f); err != nil {
						return
					}
					continue
				}
				c.close(errors.New("received data message in CloseRead"))
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return ctx
}

func (c *Conn) Close(code StatusCode, reason string) error {
	return c.closeHandshake(code, reason)
}

func (c *Conn) closeHandshake(code StatusCode, reason string) error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.wroteClose {
		return errAlreadyWroteClose
	}
	c.wroteClose = true
	ce := CloseError{Code: code, Reason: reason}
	if err := c.writeControl(opClose, ce.bytes()); err != nil {
		return fmt.Errorf("failed to close WebSocket: %w", err)
	}
	<-c.closed
	return nil
}

func TestProbe(t *testing.T) {
	p := &memPipe{out: make(chan frame), in: make(chan frame)}
	go func() {
		f := <-p.out
		time.Sleep(5 * time.Millisecond)
		p.in <- frame{op: opClose, payload: f.payload}
	}()
	c := newConn(p, true)
	ctx := c.CloseRead(context.Background())
	if err := c.Close(StatusNormalClosure, "bye"); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
}
