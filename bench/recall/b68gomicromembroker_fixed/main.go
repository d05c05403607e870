// Fixed twin: shape of go-micro PR #583 ("broker memory: fix issue with
// publish/subscribe"), 2019.
//
// The memory broker embeds a sync.RWMutex. Publish write-locked it for the
// whole call, including running every subscriber's handler. When one service
// publishes an event and another service's subscriber handles it by
// publishing a follow-up event through its client, the nested Publish locks
// the broker again and the publishing goroutine blocks on itself.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

type Message struct {
	Header map[string]string
	Body   []byte
}

type Event interface {
	Topic() string
	Message() *Message
}

type Handler func(Event) error

type Subscriber interface {
	Topic() string
	Unsubscribe() error
}

type Broker interface {
	Connect() error
	Publish(topic string, m *Message) error
	Subscribe(topic string, h Handler) (Subscriber, error)
}

type memoryEvent struct {
	topic   string
	message *Message
}

func (e *memoryEvent) Topic() string     { return e.topic }
func (e *memoryEvent) Message() *Message { return e.message }

type memorySubscriber struct {
	id      int
	topic   string
	exit    chan bool
	handler Handler
}

func (s *memorySubscriber) Topic() string      { return s.topic }
func (s *memorySubscriber) Unsubscribe() error { s.exit <- true; return nil }

type memoryBroker struct {
	sync.RWMutex
	connected   bool
	nextID      int
	Subscribers map[string][]*memorySubscriber
}

func (m *memoryBroker) Connect() error {
	m.Lock()
	defer m.Unlock()
	m.connected = true
	return nil
}

func (m *memoryBroker) Publish(topic string, message *Message) error {
	m.RLock()
	if !m.connected {
		m.RUnlock()
		return errors.New("not connected")
	}
	subs, ok := m.Subscribers[topic]
	m.RUnlock()
	if !ok {
		return nil
	}
	// Handlers run without the broker lock: they may publish again.
	p := &memoryEvent{topic: topic, message: message}
	for _, sub := range subs {
		if err := sub.handler(p); err != nil {
			return err
		}
	}
	return nil
}

func (m *memoryBroker) Subscribe(topic string, handler Handler) (Subscriber, error) {
	m.Lock()
	defer m.Unlock()
	if !m.connected {
		return nil, errors.New("not connected")
	}
	m.nextID++
	sub := &memorySubscriber{id: m.nextID, topic: topic, exit: make(chan bool, 1), handler: handler}
	m.Subscribers[topic] = append(m.Subscribers[topic], sub)
	go func() {
		<-sub.exit
		m.Lock()
		var kept []*memorySubscriber
		for _, s := range m.Subscribers[topic] {
			if s.id != sub.id {
				kept = append(kept, s)
			}
		}
		m.Subscribers[topic] = kept
		m.Unlock()
	}()
	return sub, nil
}

// Client is the RPC client every service publishes through.
type Client interface {
	Publish(ctx context.Context, topic string, payload string) error
}

type rpcClient struct{ broker Broker }

func (r *rpcClient) Publish(ctx context.Context, topic string, payload string) error {
	return r.broker.Publish(topic, &Message{Header: map[string]string{"Content-Type": "text/plain"}, Body: []byte(payload)})
}

// Publisher mirrors micro.NewPublisher.
type Publisher struct {
	c     Client
	topic string
}

func (p *Publisher) Publish(ctx context.Context, payload string) error {
	return p.c.Publish(ctx, p.topic, payload)
}

// BillingService turns every order into an invoice.
type BillingService struct {
	invoices *Publisher
	mu       sync.Mutex
	handled  int
}

func (b *BillingService) OnOrderCreated(ctx context.Context, order string) error {
	b.mu.Lock()
	b.handled++
	b.mu.Unlock()
	return b.invoices.Publish(ctx, "invoice for "+order)
}

// serverSubscribe mirrors the server's subscriber router: it decodes the
// broker event and calls the registered method.
func serverSubscribe(br Broker, topic string, fn func(context.Context, string) error) (Subscriber, error) {
	return br.Subscribe(topic, func(e Event) error {
		return fn(context.Background(), string(e.Message().Body))
	})
}

func main() {
	br := &memoryBroker{Subscribers: map[string][]*memorySubscriber{}}
	if err := br.Connect(); err != nil {
		panic(err)
	}
	client := &rpcClient{broker: br}

	billing := &BillingService{invoices: &Publisher{c: client, topic: "go.micro.topic.invoice"}}
	if _, err := serverSubscribe(br, "go.micro.topic.order", billing.OnOrderCreated); err != nil {
		panic(err)
	}
	var received []string
	if _, err := serverSubscribe(br, "go.micro.topic.invoice", func(ctx context.Context, s string) error {
		received = append(received, s)
		return nil
	}); err != nil {
		panic(err)
	}

	orders := &Publisher{c: client, topic: "go.micro.topic.order"}
	for i := 1; i <= 2; i++ {
		if err := orders.Publish(context.Background(), fmt.Sprintf("order-%d", i)); err != nil {
			fmt.Println("publish:", err)
		}
	}
	fmt.Println("invoices:", received)
}
