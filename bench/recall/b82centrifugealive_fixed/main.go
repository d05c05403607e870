// Project: centrifugal/centrifuge (client.go: Client.updatePresence, Client.Disconnect, Client.close; OnAlive handler), v0.x around 2020-2021 (approximate).
// Bug: the periodic presence update holds c.presenceMu while it runs the application's OnAlive callback, and Client.close also takes c.presenceMu first; an OnAlive handler that disconnects the client (for example when its session expired) called Disconnect, which closed synchronously and locked presenceMu again, deadlocking the client's timer goroutine. The fix makes Disconnect run close in a new goroutine ("An extra goroutine is required to solve disconnect and alive callback ordering/sync problems").
package main

import (
	"fmt"
	"sync"
	"time"
)

type status uint8

const (
	statusConnecting status = 1
	statusConnected  status = 2
	statusClosed     status = 3
)

type Disconnect struct {
	Code   uint32
	Reason string
}

var DisconnectExpired = Disconnect{Code: 3005, Reason: "expired"}

type AliveHandler func()
type DisconnectHandler func(DisconnectEvent)
type DisconnectEvent struct{ Disconnect Disconnect }

type clientEventHub struct {
	aliveHandler      AliveHandler
	disconnectHandler DisconnectHandler
}

type ChannelContext struct {
	presence bool
	info     []byte
}

type Hub struct {
	mu    sync.RWMutex
	conns map[string]*Client
}

func (h *Hub) add(c *Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conns[c.uid] = c
}

func (h *Hub) remove(c *Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.conns, c.uid)
}

type Node struct {
	hub      *Hub
	presence sync.Map // channel -> map of client infos
}

func (n *Node) addPresence(ch, uid string)    { n.presence.Store(ch+":"+uid, time.Now()) }
func (n *Node) removePresence(ch, uid string) { n.presence.Delete(ch + ":" + uid) }

type Client struct {
	mu         sync.RWMutex
	connectMu  sync.Mutex // allows to sync connect with disconnect.
	presenceMu sync.Mutex // allows to sync presence routine with client closing.
	uid        string
	user       string
	node       *Node
	status     status
	channels   map[string]ChannelContext
	eventHub   *clientEventHub
	expireAt   int64
}

func (c *Client) OnAlive(h AliveHandler)           { c.eventHub.aliveHandler = h }
func (c *Client) OnDisconnect(h DisconnectHandler) { c.eventHub.disconnectHandler = h }

// updatePresence is called periodically from the client's timer.
func (c *Client) updatePresence() {
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	c.mu.Lock()
	if c.status == statusClosed {
		c.mu.Unlock()
		return
	}
	channels := make(map[string]ChannelContext, len(c.channels))
	for channel, channelContext := range c.channels {
		channels[channel] = channelContext
	}
	c.mu.Unlock()
	if c.eventHub.aliveHandler != nil {
		c.eventHub.aliveHandler()
	}
	for channel, channelContext := range channels {
		if channelContext.presence {
			c.node.addPresence(channel, c.uid)
		}
	}
}

// Disconnect client connection with specific disconnect code and reason.
// This method internally creates a new goroutine at moment to do
// closing stuff. An extra goroutine is required to solve disconnect
// and alive callback ordering/sync problems.
func (c *Client) Disconnect(disconnect Disconnect) {
	go func() {
		_ = c.close(disconnect)
	}()
}

func (c *Client) close(disconnect Disconnect) error {
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	c.connectMu.Lock()
	defer c.connectMu.Unlock()
	c.mu.Lock()
	if c.status == statusClosed {
		c.mu.Unlock()
		return nil
	}
	c.status = statusClosed
	channels := c.channels
	c.channels = nil
	c.mu.Unlock()

	for channel, channelContext := range channels {
		if channelContext.presence {
			c.node.removePresence(channel, c.uid)
		}
	}
	c.node.hub.remove(c)
	if c.eventHub.disconnectHandler != nil {
		c.eventHub.disconnectHandler(DisconnectEvent{Disconnect: disconnect})
	}
	return nil
}

func main() {
	node := &Node{hub: &Hub{conns: map[string]*Client{}}}
	client := &Client{uid: "c-1", user: "42", node: node, status: statusConnected,
		channels: map[string]ChannelContext{"chat:index": {presence: true}},
		eventHub: &clientEventHub{}, expireAt: time.Now().Add(-time.Second).Unix()}
	node.hub.add(client)

	closed := make(chan DisconnectEvent, 1)
	client.OnDisconnect(func(e DisconnectEvent) { closed <- e })
	client.OnAlive(func() {
		if time.Now().Unix() > client.expireAt {
			client.Disconnect(DisconnectExpired)
		}
	})

	// The client's presence timer fires.
	client.updatePresence()
	e := <-closed
	fmt.Println("client disconnected:", e.Disconnect.Reason)
}
