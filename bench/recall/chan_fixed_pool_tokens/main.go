// Pattern: fatih/pool channelPool (and similar fixed-size client pools such
// as the one in go-redis): idle connections live in a buffered channel whose
// capacity is the pool size, Get receives an idle connection and Put hands
// it back while holding the pool mutex (which also guards the stats). Unlike
// fatih/pool this pool pre-creates exactly poolSize connections and never
// creates more, so Put can use a plain send.
//
// Why it is safe: connections are conserved. Exactly poolSize connections
// exist; each is either in the idle channel or held by exactly one worker,
// and only a holder calls Put. Hence at every Put len(idle) <= poolSize-1,
// and the send made with p.mu held always has room.
package main

import (
	"fmt"
	"sync"
	"time"
)

const poolSize = 3

type conn struct {
	id   int
	uses int
}

type pool struct {
	mu       sync.Mutex
	idle     chan *conn
	inUse    int
	maxInUse int
	gets     int
}

func newPool() *pool {
	p := &pool{idle: make(chan *conn, poolSize)}
	for i := 0; i < poolSize; i++ {
		p.idle <- &conn{id: i}
	}
	return p
}

func (p *pool) Get() *conn {
	c := <-p.idle // blocks until some holder Puts one back
	p.mu.Lock()
	p.inUse++
	p.gets++
	p.maxInUse = max(p.maxInUse, p.inUse)
	p.mu.Unlock()
	return c
}

func (p *pool) Put(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse--
	c.uses++
	p.idle <- c // conservation: a free slot always exists
}

func main() {
	p := newPool()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for q := 0; q < 10; q++ {
				c := p.Get()
				time.Sleep(100 * time.Microsecond) // run a query on c
				p.Put(c)
			}
		}(w)
	}
	wg.Wait()

	p.mu.Lock()
	fmt.Printf("gets=%d maxInUse=%d inUse=%d idle=%d\n", p.gets, p.maxInUse, p.inUse, len(p.idle))
	p.mu.Unlock()
	for i := 0; i < poolSize; i++ {
		c := <-p.idle
		fmt.Printf("conn %d used %d times\n", c.id, c.uses)
	}
}
