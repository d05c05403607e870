// connclose_bug models a nats.go / gRPC connection-state callback that
// closes the connection it is told about: e.g. a nats DisconnectErrHandler
// or a gRPC connectivity-state watcher calling Close(), in a client that
// invokes the handler synchronously while holding the connection mutex.
// BUGGY: netx.Conn.LostConnection locks c.mu and calls Handler.Handle(c, s)
// under it (connclose_bug/netx/netx.go:42). giveUp.Handle always calls
// c.Close(), which locks the same sync.Mutex on the same goroutine, so the
// first state change deadlocks.
// The buggy handler is registered at connclose_bug/main.go:31 (netx.Dial,
// constructor argument).
package main

import (
	"fmt"

	"example.com/recall/relock_connclose_bug/netx"
)

type giveUp struct {
	seen []netx.State
}

func (g *giveUp) Handle(c *netx.Conn, s netx.State) {
	g.seen = append(g.seen, s)
	// No reconnect policy: close on any state change.
	c.Close() // re-locks c.mu
}

func main() {
	h := &giveUp{}
	conn := netx.Dial("nats://127.0.0.1:4222", h) // registers the re-entrant handler

	conn.LostConnection() // deadlocks here
	fmt.Println("states seen:", h.seen, "url:", conn.URL)
}
