// Project: eclipse/paho.mqtt.golang (Eclipse Paho MQTT Go client), v1.1.0 era (mid 2017).
// Files/functions: router.go (router.addRoute, router.matchAndDispatch, route.match,
// routeIncludesTopic), client.go (client.Subscribe, client.IsConnected), message.go
// (messageFromPublish).
// Reference: PR #139 "Fix deadlock if callback invokes Subscribe" (merged 2017-08-29).
//
// The router embeds a sync.RWMutex that guards its list of routes. The dispatch
// goroutine started by matchAndDispatch takes r.RLock() while it walks the route list,
// and with ordered delivery (the default, ClientOptions.Order == true) it invoked each
// matching route's MessageHandler directly, still holding the read lock. A very common
// pattern is a handler for a "control" topic that reacts by subscribing to further
// topics: the handler calls client.Subscribe(topic, qos, callback), which registers the
// callback through c.msgRouter.addRoute, and addRoute takes r.Lock(). The write lock
// can never be granted while the same goroutine holds the read lock, so the dispatcher
// blocks forever and no more messages are delivered.
//
// The fix releases the read lock around the callback invocation (r.RUnlock() before
// calling the handler, r.RLock() again afterwards), so a handler may call Subscribe.
package main

import (
	"container/list"
	"fmt"
	"strings"
	"sync"
)

type Message interface {
	Topic() string
	Payload() []byte
}

type message struct {
	topic   string
	payload []byte
}

func (m *message) Topic() string   { return m.topic }
func (m *message) Payload() []byte { return m.payload }

type PublishPacket struct {
	TopicName string
	Payload   []byte
}

func messageFromPublish(p *PublishPacket) Message {
	return &message{topic: p.TopicName, payload: p.Payload}
}

type Client interface {
	IsConnected() bool
	Subscribe(topic string, qos byte, callback MessageHandler) Token
}

type MessageHandler func(Client, Message)

type Token interface {
	Wait() bool
}

type SubscribeToken struct {
	complete chan struct{}
	subs     []string
}

func (t *SubscribeToken) Wait() bool { <-t.complete; return true }

func (t *SubscribeToken) flowComplete() { close(t.complete) }

type PacketAndToken struct {
	topics []string
	t      *SubscribeToken
}

func routeIncludesTopic(route, topic string) bool {
	r := strings.Split(route, "/")
	t := strings.Split(topic, "/")
	for i := range r {
		if r[i] == "#" {
			return true
		}
		if i >= len(t) || (r[i] != "+" && r[i] != t[i]) {
			return false
		}
	}
	return len(r) == len(t)
}

type route struct {
	topic    string
	callback MessageHandler
}

func (r *route) match(topic string) bool {
	return r.topic == topic || routeIncludesTopic(r.topic, topic)
}

type router struct {
	sync.RWMutex
	routes *list.List
}

func newRouter() *router {
	return &router{routes: list.New()}
}

func (r *router) addRoute(topic string, callback MessageHandler) {
	r.Lock()
	defer r.Unlock()
	for e := r.routes.Front(); e != nil; e = e.Next() {
		if e.Value.(*route).topic == topic {
			e.Value.(*route).callback = callback
			return
		}
	}
	r.routes.PushBack(&route{topic: topic, callback: callback})
}

func (r *router) matchAndDispatch(messages <-chan *PublishPacket, order bool, c *client) {
	go func() {
		for message := range messages {
			r.RLock()
			for e := r.routes.Front(); e != nil; e = e.Next() {
				if e.Value.(*route).match(message.TopicName) {
					if order {
						e.Value.(*route).callback(c, messageFromPublish(message))
					} else {
						go e.Value.(*route).callback(c, messageFromPublish(message))
					}
				}
			}
			r.RUnlock()
		}
	}()
}

type client struct {
	sync.RWMutex
	connected       bool
	msgRouter       *router
	incomingPubChan chan *PublishPacket
	oboundP         chan *PacketAndToken
}

func (c *client) IsConnected() bool {
	c.RLock()
	defer c.RUnlock()
	return c.connected
}

func (c *client) Subscribe(topic string, qos byte, callback MessageHandler) Token {
	token := &SubscribeToken{complete: make(chan struct{})}
	if !c.IsConnected() {
		token.flowComplete()
		return token
	}
	if callback != nil {
		c.msgRouter.addRoute(topic, callback)
	}
	token.subs = append(token.subs, topic)
	c.oboundP <- &PacketAndToken{topics: []string{topic}, t: token}
	return token
}

// startOutgoingComms stands in for the network writer: it "sends" SUBSCRIBE and
// completes the token as if the SUBACK had arrived.
func (c *client) startOutgoingComms() {
	go func() {
		for pt := range c.oboundP {
			pt.t.flowComplete()
		}
	}()
}

func main() {
	c := &client{
		connected:       true,
		msgRouter:       newRouter(),
		incomingPubChan: make(chan *PublishPacket),
		oboundP:         make(chan *PacketAndToken),
	}
	c.startOutgoingComms()
	c.msgRouter.matchAndDispatch(c.incomingPubChan, true, c)

	got := make(chan string)
	c.Subscribe("control/setup", 1, func(cl Client, m Message) {
		// React to a control message by subscribing to the announced topic.
		cl.Subscribe(string(m.Payload()), 1, func(_ Client, m Message) {
			got <- m.Topic()
		})
	}).Wait()

	c.incomingPubChan <- &PublishPacket{TopicName: "control/setup", Payload: []byte("sensors/#")}
	c.incomingPubChan <- &PublishPacket{TopicName: "sensors/temp", Payload: []byte("21.5")}
	fmt.Println("received on", <-got)
}
