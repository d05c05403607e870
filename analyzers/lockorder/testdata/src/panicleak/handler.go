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

// A handler holding its lock over a helper that panics on an error that
// cannot happen (a marshal of its own fixed struct): net/http's recovery
// covers everything its handlers reach, so a panic down in a callee is
// not counted there. Silent.
type Status struct {
	mu   sync.Mutex
	info []byte
}

func (s *Status) encode() {
	b, err := strconv.Unquote(`"ok"`)
	if err != nil {
		panic(err)
	}
	s.info = []byte(b)
}

func (s *Status) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.encode()
	_, _ = w.Write(s.info)
	s.mu.Unlock()
}
