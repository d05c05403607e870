// Project: go-redis/redis v6 (pubsub.go)
// Bug: PubSub.Subscribe holds c.mu and calls c.subscribe, which writes the SUBSCRIBE
// command and then hands the connection back via c.putConn(cn, err). putConn is also used
// by the unlocked Receive path, so it takes c.mu itself when the error is a bad-conn error.
// A network failure during Subscribe therefore re-locks c.mu on the same goroutine.
// Upstream fix: issue #610, fixed in v6.5.5 (PR #611): split into a locking releaseConn
// wrapper and an "_releaseConn" variant that expects c.mu to be held; the subscribe path
// (already under c.mu) calls the underscore variant.
package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

type Conn struct {
	id     int
	broken bool
}

func (cn *Conn) WriteCmd(args ...string) error {
	if cn.broken {
		return io.EOF // e.g. the server closed the socket
	}
	return nil
}

func (cn *Conn) ReadReply() (string, error) {
	if cn.broken {
		return "", io.EOF
	}
	return "message", nil
}

type Pool interface {
	NewConn() (*Conn, error)
	CloseConn(*Conn) error
}

type flakyPool struct{ n int }

func (p *flakyPool) NewConn() (*Conn, error) {
	p.n++
	return &Conn{id: p.n, broken: p.n == 1}, nil // first connection dies mid-command
}
func (p *flakyPool) CloseConn(*Conn) error { return nil }

func isBadConn(err error) bool {
	return err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF))
}

type PubSub struct {
	pool Pool

	mu       sync.Mutex
	cn       *Conn
	channels []string
	closed   bool
}

func (c *PubSub) _conn(channels []string) (*Conn, error) {
	if c.closed {
		return nil, errors.New("redis: client is closed")
	}
	if c.cn != nil {
		return c.cn, nil
	}
	cn, err := c.pool.NewConn()
	if err != nil {
		return nil, err
	}
	c.cn = cn
	return cn, nil
}

func (c *PubSub) conn() (*Conn, error) {
	c.mu.Lock()
	cn, err := c._conn(nil)
	c.mu.Unlock()
	return cn, err
}

func (c *PubSub) _subscribe(cn *Conn, redisCmd string, channels ...string) error {
	args := append([]string{redisCmd}, channels...)
	return cn.WriteCmd(args...)
}

func (c *PubSub) subscribe(redisCmd string, channels ...string) error {
	cn, err := c._conn(channels)
	if err != nil {
		return err
	}
	err = c._subscribe(cn, redisCmd, channels...)
	c.putConn(cn, err)
	return err
}

// putConn drops a broken connection so the next call reconnects.
func (c *PubSub) putConn(cn *Conn, err error) {
	if !isBadConn(err) {
		return
	}
	c.mu.Lock() // DEADLOCK HERE: Subscribe already holds c.mu
	if c.cn == cn {
		_ = c.releaseConnLocked()
	}
	c.mu.Unlock()
}

func (c *PubSub) releaseConnLocked() error {
	if c.cn == nil {
		return nil
	}
	err := c.pool.CloseConn(c.cn)
	c.cn = nil
	return err
}

// Subscribe subscribes the client to the specified channels.
func (c *PubSub) Subscribe(channels ...string) error {
	c.mu.Lock()
	err := c.subscribe("subscribe", channels...)
	c.channels = append(c.channels, channels...)
	c.mu.Unlock()
	return err
}

// Receive reads one reply; this path does not hold c.mu while reading.
func (c *PubSub) Receive() (string, error) {
	cn, err := c.conn()
	if err != nil {
		return "", err
	}
	msg, err := cn.ReadReply()
	c.putConn(cn, err)
	return msg, err
}

func main() {
	ps := &PubSub{pool: &flakyPool{}}
	if err := ps.Subscribe("news", "sports"); err != nil {
		fmt.Println("subscribe failed, will retry:", err)
	}
	msg, err := ps.Receive()
	fmt.Println(msg, err)
}
