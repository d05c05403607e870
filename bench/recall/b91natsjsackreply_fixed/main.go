// Project: nats-io/nats.go (jetstream/message.go jetStreamMsg.ackReply, the new jetstream package), v1.28.0-v1.31.0, 2023.
// Bug: ackReply locks the message's embedded mutex to check m.ackd and, when the message was already acknowledged, returns ErrMsgAlreadyAckd without unlocking it. The second acknowledgement of a message therefore leaves the message locked and the third one (Ack, Nak, Term or InProgress) blocks forever (issue #1452 "Acking a JetStream message for the 3rd time blocks code execution", fixed by adding m.Unlock() before the early return).
package main

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
)

var (
	ErrMsgAlreadyAckd = errors.New("nats: message was already acknowledged")
	ErrMsgNotBound    = errors.New("nats: message is not bound to subscription/connection")
	ErrMsgNoReply     = errors.New("nats: message does not have a reply")
)

type ackType []byte

var (
	ackAck      ackType = []byte("+ACK")
	ackNak      ackType = []byte("-NAK")
	ackProgress ackType = []byte("+WPI")
	ackTerm     ackType = []byte("+TERM")
)

// Conn is a minimal nats.Conn: Publish takes the connection mutex.
type Conn struct {
	mu        sync.Mutex
	published []string
}

func (nc *Conn) Publish(subj string, data []byte) error {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	nc.published = append(nc.published, subj+" "+string(data))
	return nil
}

type natsMsg struct {
	Subject string
	Reply   string
	Data    []byte
	bound   bool
}

type jetStream struct{ conn *Conn }

// Msg is the jetstream.Msg interface subset used here.
type Msg interface {
	Data() []byte
	Ack() error
	Nak() error
	InProgress() error
	Term() error
}

type jetStreamMsg struct {
	msg  *natsMsg
	ackd bool
	js   *jetStream
	sync.Mutex
}

func (m *jetStreamMsg) Data() []byte      { return m.msg.Data }
func (m *jetStreamMsg) Ack() error        { return m.ackReply(ackAck) }
func (m *jetStreamMsg) Nak() error        { return m.ackReply(ackNak) }
func (m *jetStreamMsg) InProgress() error { return m.ackReply(ackProgress) }
func (m *jetStreamMsg) Term() error       { return m.ackReply(ackTerm) }

func (m *jetStreamMsg) ackReply(ackType ackType) error {
	err := m.checkReply()
	if err != nil {
		return err
	}

	m.Lock()
	if m.ackd {
		m.Unlock()
		return ErrMsgAlreadyAckd
	}
	m.Unlock()

	if err := m.js.conn.Publish(m.msg.Reply, ackType); err != nil {
		return err
	}

	// Mark that the message has been acked unless it is ackProgress
	// which can be sent many times.
	if !bytes.Equal(ackType, ackProgress) {
		m.Lock()
		m.ackd = true
		m.Unlock()
	}
	return nil
}

func (m *jetStreamMsg) checkReply() error {
	if m == nil || !m.msg.bound {
		return ErrMsgNotBound
	}
	if m.msg.Reply == "" {
		return ErrMsgNoReply
	}
	return nil
}

// ---- application: a consumer handler wrapped in a retrying middleware ----

type MessageHandler func(msg Msg)

func withAutoAck(h func(Msg) error) MessageHandler {
	return func(msg Msg) {
		if err := h(msg); err != nil {
			if err := msg.Nak(); err != nil {
				fmt.Println("nak:", err)
			}
			return
		}
		// Make sure the message is acknowledged even if the handler forgot.
		if err := msg.Ack(); err != nil && !errors.Is(err, ErrMsgAlreadyAckd) {
			fmt.Println("ack:", err)
		}
	}
}

func main() {
	js := &jetStream{conn: &Conn{}}
	msgs := []Msg{
		&jetStreamMsg{js: js, msg: &natsMsg{Subject: "ORDERS.new", Reply: "$JS.ACK.ORDERS.c.1.1.1", Data: []byte("o-1"), bound: true}},
		&jetStreamMsg{js: js, msg: &natsMsg{Subject: "ORDERS.new", Reply: "$JS.ACK.ORDERS.c.1.2.2", Data: []byte("o-2"), bound: true}},
	}

	var processed []Msg
	handler := withAutoAck(func(msg Msg) error {
		processed = append(processed, msg)
		return msg.Ack() // handler acks explicitly after storing the order
	})
	for _, m := range msgs {
		handler(m)
	}

	// On shutdown every processed message is terminated so that it is never
	// redelivered to another instance; already-acked ones just report an error.
	for _, m := range processed {
		if err := m.Term(); err != nil {
			fmt.Printf("term %s: %v\n", m.Data(), err)
		}
	}
	fmt.Println("published acks:", len(js.conn.published))
}
