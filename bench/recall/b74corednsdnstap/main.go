// Project: coredns/coredns (plugin/dnstap: listener.go, dnstap.go, handler.go), 1.12/1.13 development, 2026.
// Bug: listener.Dnstap broadcasts each dnstap frame to the connected sink clients while holding clientsMu.RLock(); when
// a client's flush fails (a slow or disconnected sink) it calls removeClient(c) synchronously, and removeClient takes
// clientsMu.Lock(), so the request-serving goroutine blocks on the write lock while it still holds the read lock, and
// every later broadcast and close() queues behind it. Fixed by coredns/coredns#8260 ("plugin/dnstap: fix
// self-deadlock in listener broadcast on client flush error"), which removes the client in a new goroutine, as the
// write-error branch already did, and keeps broadcasting to the remaining clients.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
)

type Message struct {
	Type         string
	QueryName    string
	ResponseCode int
}

type Dnstap struct {
	Identity []byte
	Version  []byte
	Message  *Message
}

type conn interface {
	Write(p []byte) (int, error)
	Close() error
}

type sinkConn struct {
	broken bool
	out    bytes.Buffer
}

var errBrokenPipe = errors.New("write: broken pipe")

func (c *sinkConn) Write(p []byte) (int, error) {
	if c.broken {
		return 0, errBrokenPipe
	}
	return c.out.Write(p)
}

func (c *sinkConn) Close() error { return nil }

// client is one framestream consumer connected to the dnstap listen socket.
type client struct {
	conn conn
	buf  bytes.Buffer // framestream encoder buffer
}

func (c *client) writeMsg(payload *Dnstap) error {
	_, err := fmt.Fprintf(&c.buf, "%s %s %d\n", payload.Message.Type, payload.Message.QueryName, payload.Message.ResponseCode)
	return err
}

func (c *client) flush() error {
	if c.buf.Len() == 0 {
		return nil
	}
	_, err := c.conn.Write(c.buf.Bytes())
	c.buf.Reset()
	return err
}

func (c *client) close() { _ = c.conn.Close() }

type listener struct {
	addr      string
	clientsMu sync.RWMutex
	clients   map[*client]struct{}
}

func newListener(addr string) *listener {
	return &listener{addr: addr, clients: make(map[*client]struct{})}
}

func (l *listener) addClient(c *client) {
	l.clientsMu.Lock()
	defer l.clientsMu.Unlock()
	l.clients[c] = struct{}{}
}

func (l *listener) removeClient(c *client) {
	l.clientsMu.Lock()
	defer l.clientsMu.Unlock()
	if _, ok := l.clients[c]; ok {
		delete(l.clients, c)
		c.close()
	}
}

func (l *listener) numClients() int {
	l.clientsMu.RLock()
	defer l.clientsMu.RUnlock()
	return len(l.clients)
}

// Dnstap sends the payload to every connected client.
func (l *listener) Dnstap(payload *Dnstap) {
	l.clientsMu.RLock()
	defer l.clientsMu.RUnlock()
	for c := range l.clients {
		if err := c.writeMsg(payload); err != nil {
			go l.removeClient(c)
			continue
		}
		if err := c.flush(); err != nil {
			l.removeClient(c)
			return
		}
	}
}

func (l *listener) close() {
	l.clientsMu.Lock()
	defer l.clientsMu.Unlock()
	for c := range l.clients {
		c.close()
		delete(l.clients, c)
	}
}

type tapper interface{ Dnstap(*Dnstap) }

type Msg struct {
	Question string
	Rcode    int
}

type ResponseWriter interface{ WriteMsg(*Msg) error }

type Handler interface {
	ServeDNS(ctx context.Context, w ResponseWriter, r *Msg) (int, error)
}

type HandlerFunc func(ctx context.Context, w ResponseWriter, r *Msg) (int, error)

func (f HandlerFunc) ServeDNS(ctx context.Context, w ResponseWriter, r *Msg) (int, error) {
	return f(ctx, w, r)
}

// DnstapPlugin is the dnstap plugin: every query and response is tapped to the configured sinks.
type DnstapPlugin struct {
	Next     Handler
	io       []tapper
	Identity []byte
	Version  []byte
}

// TapMessageWithMetadata sends the message to every tapper, inline in the request-serving goroutine.
func (h *DnstapPlugin) TapMessageWithMetadata(ctx context.Context, m *Message) {
	t := &Dnstap{Identity: h.Identity, Version: h.Version, Message: m}
	for _, io := range h.io {
		io.Dnstap(t)
	}
}

func (h *DnstapPlugin) ServeDNS(ctx context.Context, w ResponseWriter, r *Msg) (int, error) {
	h.TapMessageWithMetadata(ctx, &Message{Type: "CLIENT_QUERY", QueryName: r.Question})
	rcode, err := h.Next.ServeDNS(ctx, w, r) // the real plugin also taps the response via a wrapping ResponseWriter
	h.TapMessageWithMetadata(ctx, &Message{Type: "CLIENT_RESPONSE", QueryName: r.Question, ResponseCode: rcode})
	return rcode, err
}

type recorder struct{ msgs []*Msg }

func (r *recorder) WriteMsg(m *Msg) error { r.msgs = append(r.msgs, m); return nil }

func main() {
	l := newListener("unix:///var/run/coredns/dnstap.sock")
	healthy, gone := &sinkConn{}, &sinkConn{}
	l.addClient(&client{conn: healthy})
	l.addClient(&client{conn: gone})

	h := &DnstapPlugin{io: []tapper{l}, Identity: []byte("coredns-0"), Version: []byte("CoreDNS-1.13"),
		Next: HandlerFunc(func(ctx context.Context, w ResponseWriter, r *Msg) (int, error) {
			return 0, w.WriteMsg(&Msg{Question: r.Question, Rcode: 0})
		})}

	ctx, w := context.Background(), &recorder{}
	_, _ = h.ServeDNS(ctx, w, &Msg{Question: "example.org."})

	// collector-b disconnects; the next flush to it fails.
	gone.broken = true
	_, _ = h.ServeDNS(ctx, w, &Msg{Question: "example.net."})
	_, _ = h.ServeDNS(ctx, w, &Msg{Question: "example.com."})

	fmt.Println("answered:", len(w.msgs), "sink bytes:", healthy.out.Len())
	l.close()
	fmt.Println("clients after close:", l.numClients())
}
