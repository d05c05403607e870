// rwread_ok models a service/plugin registry (e.g. a caddy-style module
// registry or a net/rpc-like service map) whose handlers look up peers.
// CORRECT: Dispatch holds r.mu.RLock while calling Handle, and the handler
// calls r.Lookup, which RLocks the same RWMutex again. Recursive read
// locking only deadlocks if a writer calls Lock in between; here every
// Register (the only writer) happens in main before any goroutine starts,
// and nothing writes afterwards, so no writer can ever be pending.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/relock_rwread_ok/registry"
)

type upper struct{}

func (upper) Handle(_ *registry.Registry, msg string) string { return "UP:" + msg }

type chain struct{ next string }

func (c chain) Handle(r *registry.Registry, msg string) string {
	if h, ok := r.Lookup(c.next); ok { // nested RLock, no writer alive
		return h.Handle(r, "chained "+msg)
	}
	return msg
}

func main() {
	r := registry.New()
	r.Register("upper", upper{})
	r.Register("front", chain{next: "upper"}) // all writes done here

	var wg sync.WaitGroup
	out := make([]string, 4)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = r.Dispatch("front", fmt.Sprint("req", i))
		}()
	}
	wg.Wait()
	fmt.Println(out)
}
