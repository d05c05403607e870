// yamux_ok: modeled on hashicorp/yamux, where a Session reports stream
// teardown back to the object that owns it. Correct: session.Close releases
// Session.mu before calling Owner.StreamClosed, so although pool holds pool.mu
// while calling Session.Open (pool.mu -> Session.mu), the reverse edge
// Session.mu -> pool.mu never exists.
package main

import (
	"fmt"
	"sync"

	"example.com/recall/xpkg_yamux_ok/session"
)

type pool struct {
	mu     sync.Mutex
	sess   *session.Session
	active map[uint32]bool
}

// StreamClosed implements session.Owner.
func (p *pool) StreamClosed(id uint32) {
	p.mu.Lock()
	delete(p.active, id)
	p.mu.Unlock()
}

func (p *pool) open() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.sess.Open()
	p.active[id] = true
	return id
}

func main() {
	p := &pool{active: make(map[uint32]bool)}
	p.sess = session.New(p)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := p.open()
			p.sess.Close(id)
		}()
	}
	wg.Wait()
	fmt.Println("active streams:", len(p.active))
}
