// Project: ThreeDotsLabs/watermill (pubsub/gochannel)
// Bug: subscriber.sendMessageToSubscriber held s.sending while blocked waiting
// for the consumer to ack/nack the message; when the subscription context was
// cancelled, subscriber.Close tried to take s.sending before signalling
// s.closing, so neither side could make progress and Publish hung.
// Fix: Close closes s.closing before taking s.sending, and the send loop
// selects on s.closing in both the send and the ack wait.
package b23watermillgochannel

import (
	"context"
	"sync"
	"testing"
	"time"
)

type Message struct {
	UUID    string
	Payload []byte
	ack     chan struct{}
	nack    chan struct{}
	ackOnce sync.Once
	ctx     context.Context
}

func NewMessage(uuid string, payload []byte) *Message {
	return &Message{UUID: uuid, Payload: payload, ack: make(chan struct{}), nack: make(chan struct{})}
}

func (m *Message) Copy() *Message               { return NewMessage(m.UUID, m.Payload) }
func (m *Message) Ack()                         { m.ackOnce.Do(func() { close(m.ack) }) }
func (m *Message) Nack()                        { m.ackOnce.Do(func() { close(m.nack) }) }
func (m *Message) Acked() <-chan struct{}       { return m.ack }
func (m *Message) Nacked() <-chan struct{}      { return m.nack }
func (m *Message) SetContext(c context.Context) { m.ctx = c }

type Config struct {
	OutputChannelBuffer            int64
	Persistent                     bool
	BlockPublishUntilSubscriberAck bool
}

type subscriber struct {
	ctx           context.Context
	uuid          string
	sending       sync.Mutex
	outputChannel chan *Message
	closed        bool
	closing       chan struct{}
}

func (s *subscriber) Close() {
	if s.closed {
		return
	}
	s.sending.Lock()
	defer s.sending.Unlock()
	close(s.closing)
	s.closed = true
	close(s.outputChannel)
}

func (s *subscriber) sendMessageToSubscriber(msg *Message) {
	s.sending.Lock()
	defer s.sending.Unlock()
	ctx, cancelCtx := context.WithCancel(s.ctx)
	defer cancelCtx()
SendToSubscriber:
	for {
		msgToSend := msg.Copy()
		msgToSend.SetContext(ctx)
		s.outputChannel <- msgToSend
		select {
		case <-msgToSend.Acked():
			return
		case <-msgToSend.Nacked():
			continue SendToSubscriber
		}
	}
}

type GoChannel struct {
	config          Config
	subscribersWg   sync.WaitGroup
	subscribers     map[string][]*subscriber
	subscribersLock sync.RWMutex
	closed          bool
	closedLock      sync.Mutex
	closing         chan struct{}
}

func NewGoChannel(config Config) *GoChannel {
	return &GoChannel{config: config, subscribers: map[string][]*subscriber{}, closing: make(chan struct{})}
}

func (g *GoChannel) Publish(topic string, messages ...*Message) error {
	g.subscribersLock.RLock()
	defer g.subscribersLock.RUnlock()
	for _, msg := range messages {
		for _, s := range g.subscribers[topic] {
			s.sendMessageToSubscriber(msg)
		}
	}
	return nil
}

func (g *GoChannel) Subscribe(ctx context.Context, topic string) (<-chan *Message, error) {
	g.subscribersLock.Lock()
	defer g.subscribersLock.Unlock()
	s := &subscriber{ctx: ctx, uuid: topic + "-sub", outputChannel: make(chan *Message, g.config.OutputChannelBuffer), closing: make(chan struct{})}
	g.subscribersWg.Add(1)
	go func() {
		select {
		case <-ctx.Done():
		case <-g.closing:
		}
		s.Close()
		g.subscribersWg.Done()
	}()
	g.subscribers[topic] = append(g.subscribers[topic], s)
	return s.outputChannel, nil
}

func (g *GoChannel) Close() error {
	g.closedLock.Lock()
	defer g.closedLock.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	close(g.closing)
	g.subscribersWg.Wait()
	return nil
}

func TestProbe(t *testing.T) {
	pubSub := NewGoChannel(Config{OutputChannelBuffer: 0})
	ctx, cancel := context.WithCancel(context.Background())
	messages, err := pubSub.Subscribe(ctx, "orders.placed")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		msg := <-messages
		t.Logf("handler got %s, shutting down before ack", msg.UUID)
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()

	published := make(chan error)
	go func() {
		published <- pubSub.Publish("orders.placed", NewMessage("m-1", []byte(`{"id":1}`)))
	}()
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	if err := pubSub.Close(); err != nil {
		t.Fatal(err)
	}
}
