// Package subclass: one lock class under two value fields (c.in and
// c.out, both halfConn.Mutex) names two different locks; an inversion
// needs both orders on locks that can be the same.
package subclass

import "sync"

type halfConn struct {
	sync.Mutex
	seq int
}

type Conn struct {
	hs  sync.Mutex
	in  halfConn
	out halfConn
}

// read: in then hs.
func (c *Conn) read() {
	c.in.Lock()
	defer c.in.Unlock()
	c.renegotiate()
}

func (c *Conn) renegotiate() {
	c.hs.Lock()
	defer c.hs.Unlock()
	c.writeRecord()
}

// writeRecord: under hs, takes out, never in. Silent.
func (c *Conn) writeRecord() {
	c.out.Lock()
	c.out.seq++
	c.out.Unlock()
}

// A lock reached through a pointer may be either: still an inversion.
type Peer struct {
	hs   sync.Mutex
	in   halfConn
	half *halfConn
}

func (p *Peer) read() {
	p.in.Lock()
	defer p.in.Unlock()
	p.hs.Lock()
	p.hs.Unlock()
}

func (p *Peer) write() {
	p.hs.Lock()
	defer p.hs.Unlock()
	p.half.Lock() // want `lock order inversion: halfConn.Mutex then Peer.hs in Peer.read .* but Peer.hs then halfConn.Mutex in Peer.write`
	p.half.Unlock()
}
