// Modelled on pgx/pgconn: messages are encoded with a helper that marks the
// connection broken (under c.mu) if the writer fails. Batches are encoded
// into an in-memory bytes.Buffer while holding c.mu; that writer never fails.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

var errConnBroken = errors.New("conn is broken")

// flakySocket stands in for net.Conn: every failEvery-th write fails.
type flakySocket struct {
	n         atomic.Int64
	failEvery int64
	written   atomic.Int64
}

func (s *flakySocket) Write(p []byte) (int, error) {
	if s.n.Add(1)%s.failEvery == 0 {
		return 0, io.ErrClosedPipe
	}
	s.written.Add(int64(len(p)))
	return len(p), nil
}

type PgConn struct {
	mu     sync.Mutex
	sock   io.Writer
	wbuf   bytes.Buffer // batch encoding buffer, guarded by mu
	err    error        // sticky fatal error, guarded by mu
	broken int
}

// markBroken records a fatal write error. It takes c.mu.
func (c *PgConn) markBroken(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.broken++
	c.mu.Unlock()
}

// writeMsg frames body as a protocol message and writes it to w. The lock is
// only taken on the error path (via markBroken).
func (c *PgConn) writeMsg(w io.Writer, typ byte, body []byte) error {
	var hdr [5]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(body)+4))
	if _, err := w.Write(hdr[:]); err != nil {
		c.markBroken(err)
		return err
	}
	if _, err := w.Write(body); err != nil {
		c.markBroken(err)
		return err
	}
	return nil
}

// Exec writes a single query straight to the socket, without c.mu.
func (c *PgConn) Exec(sql string) error {
	return c.writeMsg(c.sock, 'Q', []byte(sql))
}

// SendBatch encodes all queries while holding c.mu. The writer is
// *bytes.Buffer, whose Write always returns a nil error, so writeMsg never
// reaches markBroken here. The socket write happens after unlocking.
func (c *PgConn) SendBatch(queries []string) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%w: %v", errConnBroken, err)
	}
	c.wbuf.Reset()
	for _, q := range queries {
		_ = c.writeMsg(&c.wbuf, 'Q', []byte(q))
	}
	_ = c.writeMsg(&c.wbuf, 'S', nil)
	out := append([]byte(nil), c.wbuf.Bytes()...)
	c.mu.Unlock()

	if _, err := c.sock.Write(out); err != nil {
		c.markBroken(err)
		return err
	}
	return nil
}

func (c *PgConn) Err() (error, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err, c.broken
}

func main() {
	sock := &flakySocket{failEvery: 13}
	c := &PgConn{sock: sock}
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if c.Exec(fmt.Sprintf("select %d", g*100+i)) != nil {
					failed.Add(1)
				}
			}
		}(g)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if c.SendBatch([]string{"begin", fmt.Sprintf("update t set v=%d", i), "commit"}) != nil {
					failed.Add(1)
				}
			}
		}(g)
	}
	wg.Wait()
	err, broken := c.Err()
	fmt.Printf("failed=%d broken=%d err=%v written=%d\n", failed.Load(), broken, err, sock.written.Load())
}
