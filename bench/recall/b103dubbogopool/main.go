// Project: apache/dubbo-go (protocol/dubbo/pool.go: gettyRPCClient.removeSession, gettyRPCClientPool.getGettyRpcClient, safeRemove, safeClose; protocol/dubbo/listener.go RpcClientHandler.OnClose), v1.2 era, late 2019 (approximate).
// Bug: when the last getty session of a gettyRPCClient closes, removeSession holds the client's c.lock and calls c.pool.safeRemove, which locks the pool mutex, while a concurrent call that finds the same client expired in getGettyRpcClient holds the pool mutex and calls conn.safeClose, which locks c.lock, so the getty event goroutine and the RPC caller deadlock (pool lock and client lock taken in opposite orders; PR #318 "reduce protocol/dubbo/pool.go lock scope" moved the pool calls out of c.lock).
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var errClientPoolClosed = errors.New("client pool closed")

// getty.Session / getty.Client, reduced.
type (
	Session interface {
		Stat() string
		Close()
	}
	GettyClient interface{ Close() }
)

type tcpSession struct{ name string }

func (s *tcpSession) Stat() string { return s.name }
func (s *tcpSession) Close()       {}

type tcpClient struct{ addr string }

func (c *tcpClient) Close() {}

type rpcSession struct {
	session Session
	reqNum  int32
}

type gettyRPCClient struct {
	once     sync.Once
	protocol string
	addr     string
	active   int64 // zero, not create or be destroyed

	pool *gettyRPCClientPool

	lock        sync.RWMutex
	gettyClient GettyClient
	sessions    []*rpcSession
}

func (c *gettyRPCClient) updateActive(active int64) { atomic.StoreInt64(&c.active, active) }
func (c *gettyRPCClient) getActive() int64          { return atomic.LoadInt64(&c.active) }

func (c *gettyRPCClient) removeSession(session Session) {
	if session == nil {
		return
	}

	c.lock.Lock()
	defer c.lock.Unlock()
	if c.sessions == nil {
		return
	}

	for i, s := range c.sessions {
		if s.session == session {
			c.sessions = append(c.sessions[:i], c.sessions[i+1:]...)
			break
		}
	}
	time.Sleep(50 * time.Millisecond) // widen the window: a caller takes the pool lock now
	fmt.Printf("after remove session{%s}, left session number:%d\n", session.Stat(), len(c.sessions))
	if len(c.sessions) == 0 {
		c.pool.safeRemove(c)
		c.close()
	}
}

func (c *gettyRPCClient) close() error {
	closeErr := fmt.Errorf("close gettyRPCClient{%s} again", c.addr)
	c.once.Do(func() {
		c.gettyClient.Close()
		c.gettyClient = nil
		for _, s := range c.sessions {
			s.session.Close()
		}
		c.sessions = c.sessions[:0]
		c.updateActive(0)
		closeErr = nil
	})
	return closeErr
}

func (c *gettyRPCClient) safeClose() error {
	c.lock.Lock()
	defer c.lock.Unlock()
	return c.close()
}

// RpcClientHandler is the getty EventListener of a client session.
type RpcClientHandler struct{ conn *gettyRPCClient }

func (h *RpcClientHandler) OnClose(session Session) {
	fmt.Printf("session{%s} is closing......\n", session.Stat())
	h.conn.removeSession(session)
}

type gettyRPCClientPool struct {
	size int   // size of []*gettyRPCClient
	ttl  int64 // ttl of every gettyRPCClient, it is checked when getConn

	sync.Mutex
	conns []*gettyRPCClient
}

func (p *gettyRPCClientPool) getGettyRpcClient(protocol, addr string) (*gettyRPCClient, error) {
	p.Lock()
	defer p.Unlock()
	if p.conns == nil {
		return nil, errClientPoolClosed
	}

	now := time.Now().Unix()
	for len(p.conns) > 0 {
		conn := p.conns[len(p.conns)-1]
		p.conns = p.conns[:len(p.conns)-1]

		if d := now - conn.getActive(); d > p.ttl {
			p.remove(conn)
			conn.safeClose()
			continue
		}
		conn.updateActive(now) // update active time
		return conn, nil
	}
	// create new conn
	return newGettyRPCClientConn(p, protocol, addr), nil
}

func (p *gettyRPCClientPool) remove(conn *gettyRPCClient) {
	if conn == nil || conn.getActive() == 0 || p.conns == nil {
		return
	}
	for idx, c := range p.conns {
		if conn == c {
			p.conns = append(p.conns[:idx], p.conns[idx+1:]...)
			break
		}
	}
}

func (p *gettyRPCClientPool) safeRemove(conn *gettyRPCClient) {
	p.Lock()
	defer p.Unlock()
	p.remove(conn)
}

func newGettyRPCClientConn(pool *gettyRPCClientPool, protocol, addr string) *gettyRPCClient {
	c := &gettyRPCClient{protocol: protocol, addr: addr, pool: pool, gettyClient: &tcpClient{addr: addr}}
	c.sessions = []*rpcSession{{session: &tcpSession{name: addr + "#1"}}}
	c.updateActive(time.Now().Unix())
	return c
}

func main() {
	pool := &gettyRPCClientPool{size: 4, ttl: 60, conns: make([]*gettyRPCClient, 0, 16)}
	old := newGettyRPCClientConn(pool, "dubbo", "10.0.0.7:20000")
	old.updateActive(time.Now().Add(-3 * time.Minute).Unix()) // idle for longer than ttl
	pool.conns = append(pool.conns, old)

	done := make(chan struct{})
	go func() { // getty session goroutine: the provider closed the connection
		(&RpcClientHandler{conn: old}).OnClose(old.sessions[0].session)
		close(done)
	}()

	time.Sleep(10 * time.Millisecond)
	conn, err := pool.getGettyRpcClient("dubbo", "10.0.0.7:20000") // Client.call
	<-done
	fmt.Println("got client", conn.addr, err)
}
