// libp2p_ok: modeled on go-libp2p Notifiees. Two types implement
// network.Notifiee: connCounter (atomics only) and peerBook (locks
// peerBook.mu; its refresh holds peerBook.mu while calling Network.Peers).
// Correct: only connCounter is ever passed to Network.Notify, so the
// Network.mu -> peerBook.mu edge never happens; peerBook is refreshed by polling.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"

	"example.com/recall/xpkg_libp2p_ok/network"
)

type connCounter struct{ live atomic.Int64 }

func (c *connCounter) Connected(string)    { c.live.Add(1) }
func (c *connCounter) Disconnected(string) { c.live.Add(-1) }

type peerBook struct {
	mu    sync.Mutex
	net   *network.Network
	known map[string]bool
}

func (b *peerBook) Connected(p string)    { b.mu.Lock(); b.known[p] = true; b.mu.Unlock() }
func (b *peerBook) Disconnected(p string) { b.mu.Lock(); delete(b.known, p); b.mu.Unlock() }

var _ network.Notifiee = (*peerBook)(nil)

func (b *peerBook) refresh() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.net.Peers() {
		b.known[p] = true
	}
}

func main() {
	net := network.New()
	counter := &connCounter{}
	net.Notify(counter)
	book := &peerBook{net: net, known: make(map[string]bool)}
	var wg sync.WaitGroup
	for _, p := range []string{"QmA", "QmB", "QmC"} {
		wg.Add(2)
		go func() { defer wg.Done(); net.Connect(p); net.ClosePeer(p) }()
		go func() { defer wg.Done(); book.refresh() }()
	}
	wg.Wait()
	fmt.Println("live:", counter.live.Load(), "known:", len(book.known))
}
