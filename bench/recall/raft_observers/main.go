// Modelled on hashicorp/raft observer.go: observers are kept in a map keyed by
// id, each carrying a func-valued FilterFn. Raft.observe() holds observersLock
// for reading while it loops over the map, invokes each filter and does a
// non-blocking channel send. Filters only touch their own captured state
// (guarded by their own mutex) and never (de)register observers, so calling
// them under the read lock is safe.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type Observation struct {
	Term  uint64
	State string
}

type FilterFn func(o *Observation) bool

type Observer struct {
	id          uint64
	channel     chan Observation
	filter      FilterFn
	numObserved atomic.Uint64
	numDropped  atomic.Uint64
}

type Raft struct {
	observersLock sync.RWMutex
	observers     map[uint64]*Observer
	nextID        atomic.Uint64
}

func (r *Raft) RegisterObserver(ch chan Observation, f FilterFn) *Observer {
	or := &Observer{id: r.nextID.Add(1), channel: ch, filter: f}
	r.observersLock.Lock()
	r.observers[or.id] = or
	r.observersLock.Unlock()
	return or
}

func (r *Raft) DeregisterObserver(or *Observer) {
	r.observersLock.Lock()
	delete(r.observers, or.id)
	r.observersLock.Unlock()
}

// observe calls the stored filter callbacks while holding the read lock.
func (r *Raft) observe(o Observation) {
	r.observersLock.RLock()
	defer r.observersLock.RUnlock()
	for _, or := range r.observers {
		if or.filter != nil && !or.filter(&o) {
			continue
		}
		select {
		case or.channel <- o:
			or.numObserved.Add(1)
		default:
			or.numDropped.Add(1)
		}
	}
}

// termTracker is a filter with its own lock: it passes only term changes.
type termTracker struct {
	mu       sync.Mutex
	lastTerm uint64
}

func (t *termTracker) filter(o *Observation) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o.Term <= t.lastTerm {
		return false
	}
	t.lastTerm = o.Term
	return true
}

func main() {
	r := &Raft{observers: make(map[uint64]*Observer)}
	tt := &termTracker{}
	termCh := make(chan Observation, 8)
	allCh := make(chan Observation, 2)
	termObs := r.RegisterObserver(termCh, tt.filter)
	leaderObs := r.RegisterObserver(allCh, func(o *Observation) bool { return o.State == "Leader" })

	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for term := uint64(1); term <= 10; term++ {
				st := "Follower"
				if (int(term)+i)%3 == 0 {
					st = "Leader"
				}
				r.observe(Observation{Term: term, State: st})
			}
		}(i)
	}
	wg.Wait()
	r.DeregisterObserver(termObs)
	r.DeregisterObserver(leaderObs)
	fmt.Println("term observed", termObs.numObserved.Load(), "dropped", termObs.numDropped.Load())
	fmt.Println("leader observed", leaderObs.numObserved.Load(), "dropped", leaderObs.numDropped.Load())
}
