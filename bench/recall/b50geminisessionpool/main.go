// Project: openGemini/openGemini (time-series database), v1.0 dev, January 2023.
// Files: engine/executor/spdy/multiplexed_session_pool.go (MultiplexedSessionPool.Close, Available,
// Dial, Get), lib/spdy/transport/node.go (Node.GetPool, Node.dial, Node.Close).
// Issue openGemini/openGemini#106 "The MultiplexedSessionPool.Close may be deadlocked", fixed by
// PR #109 "fix: deadlock for spdy when rpc session close repeated".
//
// MultiplexedSessionPool.Close write-locks closeGuard and, when the pool is already closed, returns
// without unlocking it ("If the value of the variable c.closed is true, the lock is not released";
// "For example, the Close() method is repeatedly invoked"). The first Close marks the pool closed
// and releases closeGuard; a second Close of the same pool leaves closeGuard write-locked for good.
// The next caller that asks whether the pool is usable, Node.dial through Available, blocks on
// closeGuard.RLock while holding the node's mutex, so every later GetPool for that store node hangs
// too. The fix unlocks closeGuard before returning on the already-closed path.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

type MultiplexedConnection struct {
	address string
	closed  atomic.Bool
}

func (c *MultiplexedConnection) IsClosed() bool { return c.closed.Load() }
func (c *MultiplexedConnection) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return errors.New("connection already closed")
	}
	return nil
}

type MultiplexedSession struct{ id uint64 }

type MultiplexedSessionPool struct {
	network string
	address string

	conn  *MultiplexedConnection
	queue chan *MultiplexedSession

	closed     bool
	closeGuard sync.RWMutex

	wg sync.WaitGroup
}

func NewMultiplexedSessionPool(network, address string) *MultiplexedSessionPool {
	return &MultiplexedSessionPool{network: network, address: address}
}

func (c *MultiplexedSessionPool) Dial() error {
	c.wg.Add(1)
	c.conn = &MultiplexedConnection{address: c.address}
	c.queue = make(chan *MultiplexedSession, 9)
	return nil
}

func HandleError(err error) {
	if err != nil {
		fmt.Println("spdy:", err)
	}
}

func (c *MultiplexedSessionPool) Close() {
	c.closeGuard.Lock()
	if c.closed {
		return
	}
	c.closed = true
	c.closeGuard.Unlock()
	c.wg.Done()
	HandleError(c.conn.Close())
	close(c.queue)
}

func (c *MultiplexedSessionPool) Available() bool {
	c.closeGuard.RLock()
	defer c.closeGuard.RUnlock()
	return !c.closed && !c.conn.IsClosed()
}

type Node struct {
	nodeID  uint64
	address string
	pools   []*MultiplexedSessionPool

	mu     sync.RWMutex
	cursor uint64
}

func (n *Node) GetPool() *MultiplexedSessionPool {
	poolSize := uint64(len(n.pools))
	idx := atomic.AddUint64(&n.cursor, 1) % poolSize
	if err := n.dial(idx); err != nil {
		fmt.Println("dial failed:", err)
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.pools[idx]
}

func (n *Node) dial(idx uint64) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.pools[idx]
	if p != nil && p.Available() {
		return nil
	}
	mcp := NewMultiplexedSessionPool("tcp", n.address)
	if err := mcp.Dial(); err != nil {
		return err
	}
	n.pools[idx] = mcp
	return nil
}

func main() {
	node := &Node{nodeID: 4, address: "127.0.0.1:8401", pools: make([]*MultiplexedSessionPool, 1)}
	pool := node.GetPool()
	fmt.Println("writer got a pool to", pool.address)

	// The store connection breaks: the transport closes the pool, and the shutdown of the
	// rpc client closes the same pool again.
	pool.Close()
	pool.Close()

	// The next write to store node 4 asks the node for a usable pool.
	if p := node.GetPool(); p != nil {
		fmt.Println("writer redialed", p.address)
	}
}
