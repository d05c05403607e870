// Project: micro/go-micro (network/default.go: network.Close, network.sendMsg, network.close), v1.10.0, September 2019.
// Bug: network.Close takes the network's embedded RWMutex for writing and, while still holding it, sends the "close" announcement through sendMsg, which read-locks the same RWMutex to look up the tunnel client for the network channel, so every node that shuts down blocks forever on its own lock (PR #742 "unlock before sending the message to avoid deadlock").
// Fix: Close closes n.closed and clears connected while it holds the lock, then unlocks before it sends the close message through sendMsg (PR #742).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

const (
	// NetworkChannel is the name of the tunnel channel for passing network messages
	NetworkChannel = "go.micro.network"
	// ControlChannel is the name of the tunnel channel for passing control message
	ControlChannel = "go.micro.control"
)

var ErrClientNotFound = errors.New("client not found")

// transport.Message / transport.Client
type Message struct {
	Header map[string]string
	Body   []byte
}

type Client interface {
	Send(*Message) error
	Close() error
}

// tunnel.Tunnel and router.Router, reduced to what Close needs.
type Tunnel interface {
	Dial(channel string) (Client, error)
	Close() error
}

type Router interface {
	Stop() error
}

// pbNet.Node / pbNet.Close
type pbNode struct {
	Id      string `json:"id"`
	Address string `json:"address"`
}

type pbClose struct {
	Node *pbNode `json:"node"`
}

type Options struct {
	Id      string
	Name    string
	Address string
}

type node struct {
	sync.RWMutex
	id      string
	address string
	peers   map[string]*node
}

type network struct {
	// node is network node
	*node
	// options configure the network
	options Options
	// rtr is network router
	Router
	// tun is network tunnel
	Tunnel
	// tunClient is a map of tunnel clients keyed over tunnel channel names
	tunClient map[string]Client

	sync.RWMutex
	// connected marks the network as connected
	connected bool
	// closed closes the network
	closed chan bool
}

// sendMsg sends a message to the tunnel channel
func (n *network) sendMsg(method, channel string, msg interface{}) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}

	// check if the channel client is initialized
	n.RLock()
	client, ok := n.tunClient[channel]
	if !ok || client == nil {
		n.RUnlock()
		return ErrClientNotFound
	}
	n.RUnlock()

	return client.Send(&Message{
		Header: map[string]string{"Micro-Method": method},
		Body:   body,
	})
}

// Connect dials the network and control channels.
func (n *network) Connect() error {
	n.Lock()
	defer n.Unlock()
	for _, ch := range []string{NetworkChannel, ControlChannel} {
		c, err := n.Tunnel.Dial(ch)
		if err != nil {
			return err
		}
		n.tunClient[ch] = c
	}
	n.connected = true
	return nil
}

func (n *network) close() error {
	// stop the router and close the tunnel
	if err := n.Router.Stop(); err != nil {
		return err
	}
	return n.Tunnel.Close()
}

// Close closes network connection
func (n *network) Close() error {
	n.Lock()

	if !n.connected {
		n.Unlock()
		return nil
	}

	select {
	case <-n.closed:
		n.Unlock()
		return nil
	default:
		// TODO: send close message to the network channel
		close(n.closed)
		// set connected to false
		n.connected = false

		// unlock the lock otherwise we'll deadlock sending the close
		n.Unlock()

		// send close message only if we managed to connect to NetworkChannel
		msg := &pbClose{Node: &pbNode{Id: n.options.Id, Address: n.options.Address}}
		if err := n.sendMsg("close", NetworkChannel, msg); err != nil {
			fmt.Println("Network failed to send close message:", err)
		}
	}

	return n.close()
}

// in-memory tunnel and router
type memClient struct{ channel string }

func (c *memClient) Send(m *Message) error {
	fmt.Printf("tunnel %s <- %s %s\n", c.channel, m.Header["Micro-Method"], m.Body)
	return nil
}
func (c *memClient) Close() error { return nil }

type memTunnel struct{}

func (t *memTunnel) Dial(channel string) (Client, error) { return &memClient{channel: channel}, nil }
func (t *memTunnel) Close() error                        { return nil }

type memRouter struct{}

func (r *memRouter) Stop() error { return nil }

func main() {
	opts := Options{Id: "node-1", Name: "go.micro", Address: "10.0.0.1:8085"}
	n := &network{
		node:      &node{id: opts.Id, address: opts.Address, peers: map[string]*node{}},
		options:   opts,
		Router:    &memRouter{},
		Tunnel:    &memTunnel{},
		tunClient: map[string]Client{},
		closed:    make(chan bool),
	}
	if err := n.Connect(); err != nil {
		panic(err)
	}
	if err := n.Close(); err != nil {
		panic(err)
	}
	fmt.Println("network closed")
}
