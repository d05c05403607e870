// Project: nats-io/nats.go (nats.go: Conn.processMsg, Conn.publish, Conn.Close, Conn.close; js.go flow control), v1.11.0, July 2021.
// Bug: when the reader goroutine gets a JetStream flow control message and the subscription has nothing pending, processMsg publishes the flow control reply while still holding sub.mu, and publish takes nc.mu; Conn.close holds nc.mu and then locks every sub.mu to mark it closed, so the reader and a concurrent Close deadlock (issue #775 "JS: Possible lock inversion", the documented order is connection then subscription).
// Fix: processMsg only records the flow control reply subject while it holds sub.mu and publishes it after releasing sub.mu ("Send a FC reply if needed, outside the sub's lock"), which restores the connection-then-subscription order.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"time"
)

const (
	_EMPTY_  = ""
	jsCtrlHB = 1
	jsCtrlFC = 2
	pubProto = "PUB %s %s %d\r\n"
)

var ErrConnectionClosed = errors.New("nats: connection closed")

type Msg struct {
	Subject string
	Reply   string
	Header  map[string][]string
	Data    []byte
	Sub     *Subscription
}

type MsgHandler func(msg *Msg)

type jsSub struct{ consumer string }

type Subscription struct {
	mu      sync.Mutex
	sid     int64
	Subject string
	conn    *Conn
	mcb     MsgHandler
	jsi     *jsSub
	pMsgs   int
	pBytes  int
	pHead   *Msg
	pCond   *sync.Cond
	closed  bool
}

type msgArg struct {
	subject, reply []byte
	sid            int64
}

type parseState struct{ ma msgArg }

type Conn struct {
	mu      sync.RWMutex
	subsMu  sync.RWMutex
	subs    map[int64]*Subscription
	ssid    int64
	bw      *bytes.Buffer
	fch     chan struct{}
	ps      *parseState
	closed  bool
	OutMsgs uint64
}

func (nc *Conn) isClosed() bool { return nc.closed }

func (nc *Conn) kickFlusher() {
	select {
	case nc.fch <- struct{}{}:
	default:
	}
}

func (nc *Conn) publish(subj, reply string, hdr, data []byte) error {
	nc.mu.Lock()
	if nc.isClosed() {
		nc.mu.Unlock()
		return ErrConnectionClosed
	}
	fmt.Fprintf(nc.bw, pubProto, subj, reply, len(data))
	nc.bw.Write(data)
	nc.OutMsgs++
	nc.kickFlusher()
	nc.mu.Unlock()
	return nil
}

func (nc *Conn) subscribe(subj string, cb MsgHandler, jsi *jsSub) *Subscription {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	sub := &Subscription{Subject: subj, mcb: cb, conn: nc, jsi: jsi}
	sub.pCond = sync.NewCond(&sub.mu)
	nc.subsMu.Lock()
	nc.ssid++
	sub.sid = nc.ssid
	nc.subs[sub.sid] = sub
	nc.subsMu.Unlock()
	return sub
}

func isJSControlMessage(m *Msg) (bool, int) {
	if len(m.Data) > 0 || m.Header == nil {
		return false, 0
	}
	if _, ok := m.Header["Nats-Flow-Control"]; ok {
		return true, jsCtrlFC
	}
	return true, jsCtrlHB
}

// processMsg runs on the connection's readLoop goroutine.
func (nc *Conn) processMsg(data []byte, hdr map[string][]string) {
	nc.subsMu.RLock()
	sub := nc.subs[nc.ps.ma.sid]
	nc.subsMu.RUnlock()
	if sub == nil {
		return
	}
	m := &Msg{Subject: string(nc.ps.ma.subject), Reply: string(nc.ps.ma.reply), Header: hdr, Data: data, Sub: sub}

	var fcReply string
	sub.mu.Lock()
	var ctrlMsg bool
	var ctrlType int
	if sub.jsi != nil {
		ctrlMsg, ctrlType = isJSControlMessage(m)
	}
	time.Sleep(100 * time.Millisecond) // widen the window so Close takes nc.mu now
	if !ctrlMsg {
		sub.pMsgs++
		sub.pBytes += len(m.Data)
		sub.pHead = m
		sub.pCond.Signal()
	} else if ctrlType == jsCtrlFC && sub.pMsgs == 0 {
		// Nothing pending: reply to the flow control message right away.
		fcReply = m.Reply
	}
	sub.mu.Unlock()

	// Send a FC reply if needed, outside the sub's lock.
	if fcReply != _EMPTY_ {
		nc.publish(fcReply, _EMPTY_, nil, nil)
	}
}

// Close closes the connection; close() holds nc.mu while it marks every
// subscription closed (lock order: connection, then subscription).
func (nc *Conn) Close() {
	nc.close(true)
}

func (nc *Conn) close(doCBs bool) {
	nc.mu.Lock()
	if nc.isClosed() {
		nc.mu.Unlock()
		return
	}
	nc.closed = true
	nc.kickFlusher()

	// Close sync subscriber channels and release any pending NextMsg() calls.
	nc.subsMu.Lock()
	for _, s := range nc.subs {
		s.mu.Lock()
		s.closed = true
		if s.pCond != nil {
			s.pCond.Signal()
		}
		s.mu.Unlock()
	}
	nc.subs = nil
	nc.subsMu.Unlock()
	nc.mu.Unlock()
}

func main() {
	nc := &Conn{subs: map[int64]*Subscription{}, bw: &bytes.Buffer{}, fch: make(chan struct{}, 1), ps: &parseState{}}
	sub := nc.subscribe("_INBOX.orders", func(m *Msg) {}, &jsSub{consumer: "ORDERS-C1"})

	done := make(chan struct{})
	go func() { // readLoop: the server sends a flow control request
		nc.ps.ma = msgArg{subject: []byte("_INBOX.orders"), reply: []byte("$JS.FC.ORDERS.x1"), sid: sub.sid}
		nc.processMsg(nil, map[string][]string{"Nats-Flow-Control": {"1"}})
		close(done)
	}()

	time.Sleep(20 * time.Millisecond)
	nc.Close() // application shuts down while the flow control message is processed
	<-done
	fmt.Println("closed; outbound:", nc.bw.Len(), "bytes")
}
