package callbacksetter

import "sync"

// A callback kept in a struct of handlers the object holds
// (c.events.onAlive), set through the object's setter by a literal that
// captured the object, runs with that object, as one kept in a field of
// the object itself: the periodic presence update holds presenceMu
// running the alive handler, which closes an expired client, and close
// takes presenceMu first (centrifuge's OnAlive). The handler's branch on
// its client's own state is its choice to call Close.
type clientEvents struct {
	onAlive func()
}

type Client struct {
	presenceMu sync.Mutex
	mu         sync.Mutex
	expireAt   int64
	closed     bool
	events     *clientEvents
}

func (c *Client) OnAlive(h func()) { c.events.onAlive = h }

func (c *Client) updatePresence() {
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	if c.events.onAlive != nil {
		c.events.onAlive() // want `Client.presenceMu locked again by registerAlive.func1 -> Client.Close \(at handlers.go:35, on the paths that call Client.Close\) while held since handlers.go:27: self-deadlock \[double-lock\]`
	}
}

func (c *Client) Close() {
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
}

func (c *Client) expired(now int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return now > c.expireAt
}

func registerAlive(c *Client, now func() int64) {
	c.OnAlive(func() {
		if c.expired(now()) {
			c.Close()
		}
	})
}

// Correct: the fixed handler closes on a goroutine of its own.
type Conn struct {
	presenceMu sync.Mutex
	expireAt   int64
	events     *connEvents
}

type connEvents struct {
	onAlive func()
}

func (c *Conn) OnAlive(h func()) { c.events.onAlive = h }

func (c *Conn) updatePresence() {
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	if c.events.onAlive != nil {
		c.events.onAlive()
	}
}

func (c *Conn) Close() {
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	c.expireAt = 0
}

func registerConnAlive(c *Conn, now int64) {
	c.OnAlive(func() {
		if now > c.expireAt {
			go c.Close()
		}
	})
}

// Correct: the handler set on one connection closes another, whose
// presenceMu is not the one held.
func registerPeerAlive(c, peer *Conn) {
	c.OnAlive(func() {
		if peer.expireAt > 0 {
			peer.Close()
		}
	})
}
