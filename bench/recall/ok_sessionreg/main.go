// Pattern A. Modelled on a gRPC/etcd-lease-style session registry: Attach
// inserts the session into the map under the lock, and only falls back to
// the (self-locking) slowCreate when the entry is missing — which it cannot
// be, because Attach just inserted it.
package main

import (
	"fmt"
	"sync"
)

type session struct {
	id    string
	conns int
}

type registry struct {
	mu       sync.Mutex
	sessions map[string]*session
	created  int
}

func newRegistry() *registry {
	return &registry{sessions: make(map[string]*session)}
}

// slowCreate locks r.mu on every path.
func (r *registry) slowCreate(id string) *session {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.sessions[id]; ok {
		return s
	}
	s := &session{id: id}
	r.sessions[id] = s
	r.created++
	return s
}

// Attach increments the connection count of id's session.
func (r *registry) Attach(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.sessions[id]; !ok {
		r.sessions[id] = &session{id: id}
		r.created++
	}
	s := r.sessions[id]
	if s == nil {
		// unreachable: the entry was present or inserted above
		s = r.slowCreate(id)
	}
	s.conns++
	return s.conns
}

// Detach removes a connection and drops empty sessions.
func (r *registry) Detach(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.sessions[id]
	if !ok {
		return
	}
	s.conns--
	if s.conns <= 0 {
		delete(r.sessions, id)
	}
}

// Ensure is the lock-free-caller path that may legitimately use slowCreate.
func (r *registry) Ensure(id string) *session {
	r.mu.Lock()
	s := r.sessions[id]
	r.mu.Unlock()
	if s != nil {
		return s
	}
	return r.slowCreate(id)
}

func main() {
	r := newRegistry()
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				id := fmt.Sprintf("s%d", (g+i)%10)
				r.Attach(id)
				if i%3 == 0 {
					r.Detach(id)
				}
				if i%50 == 0 {
					r.Ensure(fmt.Sprintf("e%d", g))
				}
			}
		}(g)
	}
	wg.Wait()
	r.mu.Lock()
	fmt.Println("sessions", len(r.sessions), "created", r.created)
	r.mu.Unlock()
}
