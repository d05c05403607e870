// Package magic models a slice of tailscale's magicsock.Conn: the Conn
// embeds its mutex, the derp sub-state embeds its own, and the order is
// always Conn before derp. lockAll returns the matching unlock func.
package magic

import "sync"

type derpState struct {
	sync.Mutex
	home    int
	regions map[int]int // region -> packets relayed
}

// Conn is the magic socket.
type Conn struct {
	sync.Mutex
	peers  map[string]int // peer -> preferred region
	closed bool

	derp derpState
}

// New returns an initialized Conn.
func New() *Conn {
	c := &Conn{peers: make(map[string]int)}
	c.derp.regions = make(map[int]int)
	return c
}

// lockAll acquires Conn then derp and returns the unlock in reverse order.
func (c *Conn) lockAll() func() {
	c.Lock()
	c.derp.Lock()
	return func() {
		c.derp.Unlock()
		c.Unlock()
	}
}

// SetPeer records a peer's preferred region (Conn lock only).
func (c *Conn) SetPeer(key string, region int) {
	c.Lock()
	defer c.Unlock()
	if c.closed {
		return
	}
	c.peers[key] = region
}

// SetDERPHome switches home region: Conn lock, then derp lock.
func (c *Conn) SetDERPHome(region int) {
	c.Lock()
	defer c.Unlock()
	if c.closed {
		return
	}
	c.derp.Lock()
	c.derp.home = region
	c.derp.Unlock()
}

// RelayPacket is the hot derp path; it takes only the derp lock.
func (c *Conn) RelayPacket(region int) {
	c.derp.Lock()
	defer c.derp.Unlock()
	if c.derp.regions != nil {
		c.derp.regions[region]++
	}
}

// Close tears down everything under both locks.
func (c *Conn) Close() (peers, relayed int) {
	unlock := c.lockAll()
	defer unlock()
	c.closed = true
	for _, n := range c.derp.regions {
		relayed += n
	}
	c.derp.regions = nil
	return len(c.peers), relayed
}
