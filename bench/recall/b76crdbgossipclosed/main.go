// Project: cockroachdb/cockroach (gossip/gossip.go, gossip/server.go), early 2015.
// Bug: the Gossip bootstrap and manage loops lock the embedded server's g.mu at the top of each iteration and break
// out when g.closed is set without unlocking, so after Stop the first loop to see closed exits holding g.mu and the
// other loop (and any later GetInfo) blocks forever (cockroach #584, approximate; fixed by unlocking before break).
package main

import (
	"fmt"
	"sync"
	"time"
)

const KeySentinel = "sentinel"

type info struct {
	Key  string
	Val  interface{}
	Hops uint32
}

type infoStore struct {
	Infos map[string]*info
}

func (is *infoStore) getInfo(key string) *info { return is.Infos[key] }

type addrSet struct{ addrs map[string]struct{} }

func (as *addrSet) len() int { return len(as.addrs) }

// server maintains an array of connected peers to which it gossips
// newly arrived information on a periodic basis.
type server struct {
	interval time.Duration // Interval at which to gossip fresh info
	mu       sync.Mutex    // Mutex protects is (infostore) & incoming
	ready    *sync.Cond    // Broadcasts wakeup to waiting gossip requests
	is       *infoStore    // The backing infostore
	closed   bool          // True if server was closed
	incoming *addrSet      // Incoming client addresses
}

func newServer(interval time.Duration) *server {
	s := &server{
		interval: interval,
		is:       &infoStore{Infos: map[string]*info{}},
		incoming: &addrSet{addrs: map[string]struct{}{}},
	}
	s.ready = sync.NewCond(&s.mu)
	return s
}

// stop sets the server's closed bool to true and broadcasts to
// waiting gossip clients to wakeup and finish.
func (s *server) stop(stalled *sync.Cond) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.ready.Broadcast() // wake up clients
	stalled.Broadcast() // wake up bootstrap goroutine
}

// Gossip is an instance of a gossip node. It embeds a gossip server.
type Gossip struct {
	*server                    // Embedded gossip RPC server
	outgoing     *addrSet      // Set of outgoing client addresses
	bootstrapped int           // Number of bootstrap attempts
	stalled      *sync.Cond    // Wakes bootstrap when connectivity is lost
	disconnected chan struct{} // Channel of disconnected clients
	workers      sync.WaitGroup
}

func New(interval time.Duration) *Gossip {
	g := &Gossip{
		server:       newServer(interval),
		outgoing:     &addrSet{addrs: map[string]struct{}{}},
		disconnected: make(chan struct{}, 10),
	}
	g.stalled = sync.NewCond(&g.mu)
	return g
}

// GetInfo returns an info value by key or nil if the key is not present.
func (g *Gossip) GetInfo(key string) interface{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if i := g.is.getInfo(key); i != nil {
		return i.Val
	}
	return nil
}

// Start launches the bootstrap loop and client management in separate goroutines.
func (g *Gossip) Start() {
	g.workers.Add(2)
	go func() { defer g.workers.Done(); g.bootstrap() }()
	go func() { defer g.workers.Done(); g.manage() }()
}

// Stop shuts down the gossip server and waits for its loops.
func (g *Gossip) Stop() {
	g.server.stop(g.stalled)
	g.workers.Wait()
}

// bootstrap connects the node to the gossip network. After a bootstrap attempt
// it blocks on the stalled condvar until connectivity is lost again.
func (g *Gossip) bootstrap() {
	for {
		g.mu.Lock()
		if g.closed {
			break
		}
		// Check whether or not we need bootstrap.
		haveClients := g.outgoing.len() > 0
		haveSentinel := g.is.getInfo(KeySentinel) != nil
		if !haveClients || !haveSentinel {
			g.bootstrapped++ // no resolvers configured in this single-node run
		}
		// Block until we need bootstrapping again.
		g.stalled.Wait()
		g.mu.Unlock()
	}
}

// manage manages outgoing clients. If there are no longer any outgoing
// connections or the sentinel gossip is unavailable, the bootstrapper
// is notified via the stalled conditional variable.
func (g *Gossip) manage() {
	checkTimeout := time.NewTicker(g.interval)
	defer checkTimeout.Stop()
	for {
		select {
		case <-g.disconnected:
			g.mu.Lock()
			g.mu.Unlock()
		case <-checkTimeout.C:
		}

		g.mu.Lock()
		if g.closed {
			break
		}
		hasSentinel := g.is.getInfo(KeySentinel) != nil
		if g.outgoing.len()+g.incoming.len() == 0 || !hasSentinel {
			g.stalled.Broadcast()
		}
		g.mu.Unlock()
	}
}

func main() {
	g := New(5 * time.Millisecond)
	g.Start()
	time.Sleep(30 * time.Millisecond)

	// Node shutdown.
	g.Stop()
	fmt.Println("gossip stopped; sentinel:", g.GetInfo(KeySentinel), "bootstrap attempts > 0:", g.bootstrapped > 0)
}
