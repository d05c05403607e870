// Pattern: gorilla/websocket examples/chat Hub and Client: the hub pushes each
// broadcast into client.send while holding the hub lock; a client's write pump
// only touches the client's own state (guarded by the client's own mutex) and
// never calls back into the hub, so the hub lock is never awaited by a receiver.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type Client struct {
	name string
	send chan []byte

	mu      sync.Mutex
	written int
	lines   []string
}

func (c *Client) writePump(done *sync.WaitGroup) {
	defer done.Done()
	for msg := range c.send {
		c.mu.Lock()
		c.written += len(msg)
		c.lines = append(c.lines, strings.ToUpper(string(msg)))
		c.mu.Unlock()
	}
}

func (c *Client) Stats() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines), c.written
}

type Hub struct {
	mu      sync.Mutex
	clients map[*Client]bool
}

func NewHub() *Hub { return &Hub{clients: map[*Client]bool{}} }

func (h *Hub) Register(c *Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clients[c] = true
}

func (h *Hub) Broadcast(msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		c.send <- msg
	}
}

func (h *Hub) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		close(c.send)
		delete(h.clients, c)
	}
}

func main() {
	hub := NewHub()
	var pumps sync.WaitGroup
	var clients []*Client
	for _, n := range []string{"alice", "bob", "carol"} {
		c := &Client{name: n, send: make(chan []byte)}
		hub.Register(c)
		clients = append(clients, c)
		pumps.Add(1)
		go c.writePump(&pumps)
	}

	// A monitor polls client and hub stats concurrently, never nesting locks.
	stop := make(chan struct{})
	monDone := make(chan struct{})
	go func() {
		defer close(monDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, c := range clients {
				c.Stats()
			}
			hub.Count()
		}
	}()

	for i := 0; i < 25; i++ {
		hub.Broadcast([]byte(fmt.Sprintf("message %d", i)))
	}
	hub.Close()
	pumps.Wait()
	close(stop)
	<-monDone

	for _, c := range clients {
		n, b := c.Stats()
		fmt.Printf("%s: %d messages, %d bytes\n", c.name, n, b)
	}
}
