// Project: jackc/puddle (v1 resource pool used by pgxpool)
// Bug: Pool guards its state with p.mux and waits for resources on
//
//	p.cond = sync.NewCond(&p.mux). Release locks through the alias
//	p.cond.L; on the "pool is over its target size" path it called the
//	stats hook, which calls the public p.Stat() -> p.mux.Lock(). cond.L is
//	&p.mux, so the releasing goroutine deadlocks on its own mutex.
//
// Fix: compute the stat with an unlocked helper (statLocked) while cond.L is
//
//	held.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrClosedPool = errors.New("closed pool")

type Constructor func(ctx context.Context) (any, error)
type Destructor func(value any)

const (
	resourceStatusIdle = iota
	resourceStatusAcquired
	resourceStatusHijacked
)

type Resource struct {
	value        any
	pool         *Pool
	creationTime time.Time
	status       byte
}

type Stat struct {
	constructingResources int32
	acquiredResources     int32
	idleResources         int32
	maxResources          int32
	acquireCount          int64
}

type Pool struct {
	cond       *sync.Cond
	mux        sync.Mutex
	destructWG sync.WaitGroup

	allResources  []*Resource
	idleResources []*Resource

	constructor Constructor
	destructor  Destructor
	maxSize     int32
	targetSize  int32

	acquireCount  int64
	closed        bool
	onStatChanged func(*Stat)
}

func NewPool(constructor Constructor, destructor Destructor, maxSize int32) *Pool {
	p := &Pool{constructor: constructor, destructor: destructor, maxSize: maxSize, targetSize: maxSize}
	p.cond = sync.NewCond(&p.mux)
	return p
}

func (p *Pool) Stat() *Stat {
	p.mux.Lock() // deadlock: p.mux already held through p.cond.L in Release
	defer p.mux.Unlock()
	return p.statLocked()
}

func (p *Pool) statLocked() *Stat {
	s := &Stat{maxResources: p.maxSize, acquireCount: p.acquireCount}
	for _, r := range p.allResources {
		switch r.status {
		case resourceStatusIdle:
			s.idleResources++
		case resourceStatusAcquired:
			s.acquiredResources++
		}
	}
	return s
}

func (p *Pool) Acquire(ctx context.Context) (*Resource, error) {
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	for {
		if p.closed {
			return nil, ErrClosedPool
		}
		if n := len(p.idleResources); n > 0 {
			res := p.idleResources[n-1]
			p.idleResources = p.idleResources[:n-1]
			res.status = resourceStatusAcquired
			p.acquireCount++
			return res, nil
		}
		if int32(len(p.allResources)) < p.maxSize {
			v, err := p.constructor(ctx)
			if err != nil {
				return nil, err
			}
			res := &Resource{value: v, pool: p, creationTime: time.Now(), status: resourceStatusAcquired}
			p.allResources = append(p.allResources, res)
			p.acquireCount++
			return res, nil
		}
		p.cond.Wait()
	}
}

// Release returns the resource to the pool.
func (res *Resource) Release() {
	p := res.pool
	p.cond.L.Lock()
	defer p.cond.L.Unlock()
	if int32(len(p.allResources)) > p.targetSize {
		p.destroyAcquiredResource(res)
		return
	}
	res.status = resourceStatusIdle
	p.idleResources = append(p.idleResources, res)
	p.cond.Signal()
}

func (p *Pool) destroyAcquiredResource(res *Resource) {
	p.allResources = removeResource(p.allResources, res)
	p.destructWG.Add(1)
	go func(v any) {
		defer p.destructWG.Done()
		p.destructor(v)
	}(res.value)
	p.notifyStatChanged()
}

func (p *Pool) notifyStatChanged() {
	if p.onStatChanged != nil {
		p.onStatChanged(p.Stat()) // BUG: p.Stat locks p.mux == p.cond.L
	}
}

func removeResource(slice []*Resource, res *Resource) []*Resource {
	for i := range slice {
		if slice[i] == res {
			slice[i] = slice[len(slice)-1]
			return slice[:len(slice)-1]
		}
	}
	panic("BUG: removeResource could not find res in slice")
}

func main() {
	connID := 0
	p := NewPool(func(ctx context.Context) (any, error) {
		connID++
		return fmt.Sprintf("pgconn-%d", connID), nil
	}, func(v any) {}, 4)
	p.onStatChanged = func(s *Stat) {
		fmt.Printf("pool: acquired=%d idle=%d max=%d\n", s.acquiredResources, s.idleResources, s.maxResources)
	}

	ctx := context.Background()
	a, _ := p.Acquire(ctx)
	b, _ := p.Acquire(ctx)
	a.Release()

	// pgxpool shrinks the pool after a config reload
	p.cond.L.Lock()
	p.targetSize = 1
	p.cond.L.Unlock()

	b.Release()
	p.destructWG.Wait()
	fmt.Println("done, acquires:", p.Stat().acquireCount)
}
