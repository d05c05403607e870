// Pattern: a method uses TryLock; if the mutex is free it computes fresh
// results under the lock, otherwise it falls back to the last published
// snapshot. When called by a goroutine that already holds the mutex, TryLock
// simply fails (it never blocks), so the call cannot self-deadlock.
// Modelled on buffer/connection pools whose Stats() is used both by metrics
// scrapers (Prometheus collectors) and by internal logging under the pool lock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type Stats struct {
	Free, InUse, Grows int
}

type Pool struct {
	mu    sync.Mutex
	free  [][]byte
	inUse int
	grows int
	snap  atomic.Pointer[Stats] // always non-nil after NewPool
	log   []string              // guarded by mu
}

func NewPool() *Pool {
	p := &Pool{}
	p.snap.Store(&Stats{})
	return p
}

func (p *Pool) statsLocked() Stats {
	return Stats{Free: len(p.free), InUse: p.inUse, Grows: p.grows}
}

func (p *Pool) publishLocked() {
	s := p.statsLocked()
	p.snap.Store(&s)
}

// Stats returns fresh numbers when p.mu is available, else the snapshot.
func (p *Pool) Stats() Stats {
	if p.mu.TryLock() {
		defer p.mu.Unlock()
		p.publishLocked()
		return p.statsLocked()
	}
	return *p.snap.Load()
}

// logGrowLocked is called with p.mu held; Stats() therefore takes the
// TryLock-failed branch and reads the snapshot published just before.
func (p *Pool) logGrowLocked() {
	st := p.Stats()
	p.log = append(p.log, fmt.Sprintf("grow #%d (in use %d)", st.Grows, st.InUse))
}

func (p *Pool) Get() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse++
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	p.grows++
	p.publishLocked()
	p.logGrowLocked()
	return make([]byte, 0, 64)
}

func (p *Pool) Put(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inUse--
	p.free = append(p.free, b[:0])
}

func main() {
	p := NewPool()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				b1, b2 := p.Get(), p.Get()
				b1 = append(b1, byte(i))
				p.Put(b1)
				p.Put(b2)
			}
		}()
	}
	// metrics scraper, never holds p.mu
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			_ = p.Stats()
		}
	}()
	wg.Wait()
	st := p.Stats()
	p.mu.Lock()
	nlog := len(p.log)
	p.mu.Unlock()
	fmt.Printf("final stats %+v, grow log entries %d\n", st, nlog)
}
