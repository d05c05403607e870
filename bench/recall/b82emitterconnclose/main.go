// Project: emitter-io/emitter (internal/broker/conn.go: Conn.Close, Conn.Unsubscribe; internal/message/counter.go: Counters), 2017-2018 (approximate).
// Bug: Conn.Close locked the connection's embedded mutex and then, to drop every subscription of the closing client, called c.Unsubscribe for each counter, and Unsubscribe locks the same embedded mutex again, so closing any client that still had a subscription deadlocked the connection goroutine. The fix removes the lock from Close ("no need to lock since each Unsubscribe is already locked. Locking the 'Close()' would result in a deadlock").
package main

import (
	"fmt"
	"strings"
	"sync"
)

// ---- internal/message ----

type Ssid []uint32

func (s Ssid) Encode() string { return fmt.Sprint([]uint32(s)) }

type Subscriber interface {
	ID() string
	Type() string
}

type Counter struct {
	Ssid    Ssid
	Channel []byte
	Counter int
}

// Counters tracks the subscriptions of one connection.
type Counters struct {
	sync.Mutex
	m map[string]*Counter
}

func NewCounters() *Counters { return &Counters{m: make(map[string]*Counter)} }

func (c *Counters) Increment(ssid Ssid, channel []byte) (first bool) {
	c.Lock()
	defer c.Unlock()
	key := ssid.Encode()
	if e, ok := c.m[key]; ok {
		e.Counter++
		return false
	}
	c.m[key] = &Counter{Ssid: ssid, Channel: channel, Counter: 1}
	return true
}

func (c *Counters) Decrement(ssid Ssid) (last bool) {
	c.Lock()
	defer c.Unlock()
	key := ssid.Encode()
	if e, ok := c.m[key]; ok {
		e.Counter--
		if e.Counter <= 0 {
			delete(c.m, key)
			return true
		}
	}
	return false
}

func (c *Counters) All() []Counter {
	c.Lock()
	defer c.Unlock()
	out := make([]Counter, 0, len(c.m))
	for _, v := range c.m {
		out = append(out, *v)
	}
	return out
}

// Trie stands in for the subscription trie.
type Trie struct {
	sync.RWMutex
	subs map[string]map[string]Subscriber
}

func (t *Trie) Subscribe(ssid Ssid, sub Subscriber) {
	t.Lock()
	defer t.Unlock()
	if t.subs[ssid.Encode()] == nil {
		t.subs[ssid.Encode()] = map[string]Subscriber{}
	}
	t.subs[ssid.Encode()][sub.ID()] = sub
}

func (t *Trie) Unsubscribe(ssid Ssid, sub Subscriber) {
	t.Lock()
	defer t.Unlock()
	delete(t.subs[ssid.Encode()], sub.ID())
}

// ---- internal/broker ----

type Service struct {
	subscriptions *Trie
	presenceMu    sync.Mutex
	presence      []string
}

func (s *Service) onSubscribe(ssid Ssid, sub Subscriber) { s.subscriptions.Subscribe(ssid, sub) }

func (s *Service) onUnsubscribe(ssid Ssid, sub Subscriber) { s.subscriptions.Unsubscribe(ssid, sub) }

func (s *Service) notifyUnsubscribe(conn *Conn, ssid Ssid, channel []byte) {
	s.presenceMu.Lock()
	defer s.presenceMu.Unlock()
	s.presence = append(s.presence, "unsubscribe "+conn.ID()+" "+strings.TrimSuffix(string(channel), "/"))
}

type Conn struct {
	sync.Mutex
	guid    string
	subs    *Counters
	service *Service
	closed  bool
}

func (c *Conn) ID() string   { return c.guid }
func (c *Conn) Type() string { return "direct" }

func (c *Conn) Subscribe(ssid Ssid, channel []byte) {
	c.Lock()
	defer c.Unlock()
	if first := c.subs.Increment(ssid, channel); first {
		c.service.onSubscribe(ssid, c)
	}
}

func (c *Conn) Unsubscribe(ssid Ssid, channel []byte) {
	c.Lock()
	defer c.Unlock()
	// Decrement the counter and if there's no more subscriptions, notify everyone.
	if last := c.subs.Decrement(ssid); last {
		c.service.onUnsubscribe(ssid, c)
		c.service.notifyUnsubscribe(c, ssid, channel)
	}
}

// Close terminates the connection.
func (c *Conn) Close() error {
	c.Lock()
	defer c.Unlock()

	// Unsubscribe from everything.
	for _, counter := range c.subs.All() {
		c.Unsubscribe(counter.Ssid, counter.Channel)
	}
	c.closed = true
	return nil
}

func main() {
	svc := &Service{subscriptions: &Trie{subs: map[string]map[string]Subscriber{}}}
	conn := &Conn{guid: "FA3Q7", subs: NewCounters(), service: svc}
	conn.Subscribe(Ssid{0x1, 0xa1, 0xb2}, []byte("sensors/temp/"))
	// The client's socket read loop returns (EOF) and the connection is closed.
	if err := conn.Close(); err != nil {
		panic(err)
	}
	fmt.Println("presence events:", svc.presence)
}
