package panicleak

import (
	"net/http"
	"strconv"
	"sync"
)

// An HTTP handler that panics with its lock held: net/http's server
// recovers a handler's panic and serves the next request, which blocks
// on the lock.
type Counter struct {
	mu   sync.Mutex
	hits map[string]int
}

func (c *Counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil {
		panic(err) // want `Counter.mu taken at handler.go:\d+ is still held when this panics, and net/http recovers the panic of Counter.ServeHTTP, an http.Handler.ServeHTTP handler: the program goes on with Counter.mu locked, and its next Lock blocks for good \[lock-leak\]`
	}
	c.hits[r.URL.Path] += n
	c.mu.Unlock()
}
