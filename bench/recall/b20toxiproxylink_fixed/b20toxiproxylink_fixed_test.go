// Project: github.com/Shopify/toxiproxy
// Bug: disabling a proxy (stop) held proxy.connections while it closed every client
// connection and removed its link from the ToxicCollection (collection lock); the API's
// RemoveToxic holds the collection lock and, for a link whose client already hung up,
// drops the connection through the link's back-pointer to its Proxy
// (link.proxy.RemoveConnection -> connections lock): AB-BA.
// Fix: stop() detaches the connection list under connections.Lock and closes the
// connections / removes the links after releasing it.

package b20toxiproxylink_fixed

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

type ToxicWrapper struct {
	Name       string
	Type       string
	Stream     string
	Toxicity   float32
	Index      int
	BufferSize int
}

type ToxicStub struct {
	Interrupt chan struct{}
	closed    chan struct{}
}

// InterruptToxic reports whether the stub was running and has been paused.
func (s *ToxicStub) InterruptToxic() bool {
	select {
	case s.Interrupt <- struct{}{}:
		return true
	case <-s.closed:
		return false
	}
}

type ToxicLink struct {
	name      string
	stubs     []*ToxicStub
	proxy     *Proxy
	toxics    *ToxicCollection
	direction string
}

func (link *ToxicLink) RemoveToxic(toxic *ToxicWrapper) {
	i := toxic.Index
	if i >= len(link.stubs) {
		return
	}
	if link.stubs[i].InterruptToxic() {
		link.stubs = append(link.stubs[:i], link.stubs[i+1:]...)
		return
	}
	// The stub is already closed: the client went away, forget the connection.
	link.proxy.RemoveConnection(link.name)
}

type ToxicCollection struct {
	sync.Mutex
	noop   *ToxicWrapper
	proxy  *Proxy
	chain  [][]*ToxicWrapper
	links  map[string]*ToxicLink
	byName map[string]*ToxicWrapper
}

func (c *ToxicCollection) RemoveToxic(name string) error {
	c.Lock()
	defer c.Unlock()
	toxic, ok := c.byName[name]
	if !ok {
		return errors.New("toxic not found")
	}
	delete(c.byName, name)
	for _, link := range c.links {
		if link.direction == toxic.Stream {
			link.RemoveToxic(toxic)
		}
	}
	return nil
}

func (c *ToxicCollection) RemoveLink(name string) {
	c.Lock()
	defer c.Unlock()
	delete(c.links, name)
}

type ConnectionList struct {
	list map[string]net.Conn
	lock sync.Mutex
}

func (c *ConnectionList) Lock()   { c.lock.Lock() }
func (c *ConnectionList) Unlock() { c.lock.Unlock() }

type Proxy struct {
	sync.Mutex
	Name        string
	Listen      string
	Upstream    string
	Enabled     bool
	connections ConnectionList
	Toxics      *ToxicCollection
}

func (proxy *Proxy) RemoveConnection(name string) {
	proxy.connections.Lock()
	defer proxy.connections.Unlock()
	delete(proxy.connections.list, name)
}

func (proxy *Proxy) Stop() {
	proxy.Lock()
	defer proxy.Unlock()
	stop(proxy)
}

func stop(proxy *Proxy) {
	if !proxy.Enabled {
		return
	}
	proxy.Enabled = false
	proxy.connections.Lock()
	conns := proxy.connections.list
	proxy.connections.list = make(map[string]net.Conn)
	proxy.connections.Unlock()
	for name, conn := range conns {
		conn.Close()
		proxy.Toxics.RemoveLink(name)
	}
}

// lingerConn is a client socket whose Close takes a while (SO_LINGER).
type lingerConn struct {
	net.Conn
	closing chan struct{}
}

func (c *lingerConn) Close() error {
	close(c.closing)
	time.Sleep(100 * time.Millisecond)
	return nil
}

func TestDisableProxyWhileRemovingToxic(t *testing.T) {
	proxy := &Proxy{Name: "redis", Listen: "127.0.0.1:26379", Upstream: "127.0.0.1:6379", Enabled: true}
	proxy.Toxics = &ToxicCollection{proxy: proxy, links: map[string]*ToxicLink{}, byName: map[string]*ToxicWrapper{}}
	conn := &lingerConn{closing: make(chan struct{})}
	proxy.connections.list = map[string]net.Conn{"client1upstream": conn}
	stub := &ToxicStub{Interrupt: make(chan struct{}), closed: make(chan struct{})}
	close(stub.closed) // the client already hung up
	link := &ToxicLink{name: "client1upstream", stubs: []*ToxicStub{stub}, proxy: proxy, toxics: proxy.Toxics, direction: "upstream"}
	proxy.Toxics.links[link.name] = link
	proxy.Toxics.byName["latency_upstream"] = &ToxicWrapper{Name: "latency_upstream", Type: "latency", Stream: "upstream"}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // POST /proxies/redis {"enabled": false}
		defer wg.Done()
		proxy.Stop()
	}()
	<-conn.closing // stop holds connections.lock
	go func() {    // DELETE /proxies/redis/toxics/latency_upstream
		defer wg.Done()
		_ = proxy.Toxics.RemoveToxic("latency_upstream")
	}()
	wg.Wait()
}
