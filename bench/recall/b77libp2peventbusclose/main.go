// Project: libp2p/go-libp2p-eventbus (basic.go, later p2p/host/eventbus in go-libp2p), v0.1.x, 2019-2020 (approximate).
// Bug: node.emit holds the per-type node.lk while it does a blocking send into every subscriber's channel; sub.Close must take the same node.lk to remove its sink, so a subscriber that stops reading and calls Close while an Emit is blocked on its full channel waits for n.lk forever while the emitter waits for the subscriber to read. The fix starts a goroutine in Close that drains the channel before taking n.lk.
package main

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

type basicBus struct {
	lk    sync.RWMutex
	nodes map[reflect.Type]*node
}

type node struct {
	// Note: make sure to NEVER lock basicBus.lk when this lock is held
	lk        sync.Mutex
	typ       reflect.Type
	nEmitters int32 // emitter ref count
	sinks     []chan interface{}
}

func NewBus() *basicBus { return &basicBus{nodes: map[reflect.Type]*node{}} }

func (b *basicBus) withNode(typ reflect.Type, cb func(*node)) {
	b.lk.Lock()
	n, ok := b.nodes[typ]
	if !ok {
		n = &node{typ: typ}
		b.nodes[typ] = n
	}
	n.lk.Lock()
	b.lk.Unlock()
	cb(n)
	n.lk.Unlock()
}

func (b *basicBus) tryDropNode(typ reflect.Type) {
	b.lk.Lock()
	n, ok := b.nodes[typ]
	if !ok { // already dropped
		b.lk.Unlock()
		return
	}

	n.lk.Lock()
	if atomic.LoadInt32(&n.nEmitters) > 0 || len(n.sinks) > 0 {
		n.lk.Unlock()
		b.lk.Unlock()
		return // still in use
	}
	n.lk.Unlock()

	delete(b.nodes, typ)
	b.lk.Unlock()
}

type sub struct {
	ch      chan interface{}
	nodes   []*node
	dropper func(reflect.Type)
}

func (s *sub) Out() <-chan interface{} { return s.ch }

func (s *sub) Close() error {
	for _, n := range s.nodes {
		n.lk.Lock()

		for i := 0; i < len(n.sinks); i++ {
			if n.sinks[i] == s.ch {
				n.sinks[i], n.sinks[len(n.sinks)-1] = n.sinks[len(n.sinks)-1], nil
				n.sinks = n.sinks[:len(n.sinks)-1]
				break
			}
		}

		tryDrop := len(n.sinks) == 0 && atomic.LoadInt32(&n.nEmitters) == 0

		n.lk.Unlock()

		if tryDrop {
			s.dropper(n.typ)
		}
	}
	close(s.ch)
	return nil
}

type subSettings struct{ buffer int }

type SubscriptionOpt func(*subSettings) error

func BufSize(n int) SubscriptionOpt {
	return func(s *subSettings) error { s.buffer = n; return nil }
}

// Subscribe creates a new Subscription.
func (b *basicBus) Subscribe(evtTypes interface{}, opts ...SubscriptionOpt) (*sub, error) {
	settings := subSettings{buffer: 16}
	for _, opt := range opts {
		if err := opt(&settings); err != nil {
			return nil, err
		}
	}
	typ := reflect.TypeOf(evtTypes)
	out := &sub{ch: make(chan interface{}, settings.buffer), dropper: b.tryDropNode}
	b.withNode(typ.Elem(), func(n *node) {
		n.sinks = append(n.sinks, out.ch)
		out.nodes = append(out.nodes, n)
	})
	return out, nil
}

type emitter struct {
	n       *node
	typ     reflect.Type
	closed  int32
	dropper func(reflect.Type)
}

func (e *emitter) Emit(evt interface{}) error {
	if atomic.LoadInt32(&e.closed) != 0 {
		return errors.New("emitter is closed")
	}
	e.n.emit(evt)
	return nil
}

func (e *emitter) Close() error {
	if !atomic.CompareAndSwapInt32(&e.closed, 0, 1) {
		return errors.New("closed an emitter more than once")
	}
	if atomic.AddInt32(&e.n.nEmitters, -1) == 0 {
		e.dropper(e.typ)
	}
	return nil
}

// Emitter creates a new event emitter.
func (b *basicBus) Emitter(evtType interface{}) (*emitter, error) {
	typ := reflect.TypeOf(evtType).Elem()
	var e *emitter
	b.withNode(typ, func(n *node) {
		atomic.AddInt32(&n.nEmitters, 1)
		e = &emitter{n: n, typ: typ, dropper: b.tryDropNode}
	})
	return e, nil
}

func (n *node) emit(evt interface{}) {
	if typ := reflect.TypeOf(evt); typ != n.typ {
		panic(fmt.Sprintf("Emit called with wrong type. expected: %s, got: %s", n.typ, typ))
	}
	n.lk.Lock()
	for _, ch := range n.sinks {
		ch <- evt
	}
	n.lk.Unlock()
}

// EvtPeerIdentificationCompleted is emitted by the identify service.
type EvtPeerIdentificationCompleted struct{ Peer string }

func main() {
	bus := NewBus()
	em, _ := bus.Emitter(new(EvtPeerIdentificationCompleted))
	s, _ := bus.Subscribe(new(EvtPeerIdentificationCompleted), BufSize(1))

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // identify service finishing handshakes
		defer wg.Done()
		for _, p := range []string{"QmA", "QmB", "QmC"} {
			_ = em.Emit(EvtPeerIdentificationCompleted{Peer: p})
		}
		_ = em.Close()
	}()
	go func() { // a consumer (e.g. autorelay) that is shutting down
		defer wg.Done()
		evt := <-s.Out()
		fmt.Println("got", evt.(EvtPeerIdentificationCompleted).Peer)
		time.Sleep(50 * time.Millisecond) // emitter is now blocked inside emit
		_ = s.Close()
	}()
	wg.Wait()
	fmt.Println("bus nodes left:", len(bus.nodes))
}
