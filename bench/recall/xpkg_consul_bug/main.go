// consul_bug: modeled on consul's server router consuming serf LAN events
// (handlers supplied through serf.Config).
// DEADLOCK (AB-BA): serf/serf.go:45 calls EventHandler.HandleEvent in a loop
// while holding Serf.mu, and router.HandleEvent takes router.mu; meanwhile
// main.go:33 calls Serf.Members (takes Serf.mu) while holding router.mu.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/xpkg_consul_bug/serf"
)

type router struct {
	mu      sync.Mutex
	serf    *serf.Serf
	servers map[string]bool
}

// HandleEvent implements serf.EventHandler.
func (r *router) HandleEvent(e serf.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers[e.Member] = true
}

// rebalance drops servers that are no longer serf members.
func (r *router) rebalance() {
	r.mu.Lock()
	defer r.mu.Unlock()
	live := make(map[string]bool)
	for _, m := range r.serf.Members() {
		live[m] = true
	}
	for s := range r.servers {
		if !live[s] {
			delete(r.servers, s)
		}
	}
}

type eventLogger struct{}

func (eventLogger) HandleEvent(e serf.Event) { fmt.Println(e.Kind, e.Member) }

func main() {
	r := &router{servers: make(map[string]bool)}
	r.serf = serf.Create(serf.Config{
		NodeName: "server-1",
		Handlers: []serf.EventHandler{eventLogger{}, r},
	})
	var wg sync.WaitGroup
	for _, n := range []string{"server-2", "server-3"} {
		wg.Add(2)
		go func() { defer wg.Done(); r.serf.HandleNodeJoin(n) }()
		go func() { defer wg.Done(); r.rebalance() }()
	}
	wg.Wait()
}
