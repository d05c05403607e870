// Modelled on CockroachDB's kvserver Store/Replica (store.go, replica.go):
// the store mutex is always acquired before any replica mutex. That order is
// kept on every path: direct calls, the replicaVisitor interface used by the
// scanner, and the split-trigger callback installed through a setter.

package main

import (
	"fmt"
	"sort"
	"sync"
)

type Replica struct {
	RangeID int64 // immutable

	mu struct {
		sync.Mutex
		startKey, endKey string
		leaseholder      bool
		appliedIndex     uint64
	}
}

// Apply takes only the replica lock.
func (r *Replica) Apply(n uint64) {
	r.mu.Lock()
	r.mu.appliedIndex += n
	r.mu.Unlock()
}

type replicaVisitor interface {
	Visit(r *Replica) // called with Store.mu held; may lock r.mu
}

type leaseCounter struct{ held, total int }

func (lc *leaseCounter) Visit(r *Replica) {
	r.mu.Lock()
	if r.mu.leaseholder {
		lc.held++
	}
	r.mu.Unlock()
	lc.total++
}

type Store struct {
	mu struct {
		sync.Mutex
		replicas map[int64]*Replica
		nextID   int64
	}
	onSplit func(lhs, rhs *Replica) // set via SetSplitTrigger; called with mu held
}

func NewStore() *Store {
	s := &Store{}
	s.mu.replicas = make(map[int64]*Replica)
	return s
}

func (s *Store) SetSplitTrigger(fn func(lhs, rhs *Replica)) {
	s.mu.Lock()
	s.onSplit = fn
	s.mu.Unlock()
}

func (s *Store) AddReplica(start, end string, lease bool) *Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.nextID++
	r := &Replica{RangeID: s.mu.nextID}
	r.mu.startKey, r.mu.endKey, r.mu.leaseholder = start, end, lease
	s.mu.replicas[r.RangeID] = r
	return r
}

// SplitRange: Store.mu -> lhs.mu, then Store.mu -> (callback) -> rhs.mu/lhs.mu.
func (s *Store) SplitRange(id int64, splitKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lhs, ok := s.mu.replicas[id]
	if !ok {
		return
	}
	lhs.mu.Lock()
	if splitKey <= lhs.mu.startKey || splitKey >= lhs.mu.endKey {
		lhs.mu.Unlock()
		return
	}
	s.mu.nextID++
	rhs := &Replica{RangeID: s.mu.nextID}
	rhs.mu.startKey, rhs.mu.endKey = splitKey, lhs.mu.endKey
	lhs.mu.endKey = splitKey
	lhs.mu.Unlock()
	s.mu.replicas[rhs.RangeID] = rhs
	if s.onSplit != nil {
		s.onSplit(lhs, rhs)
	}
}

func (s *Store) VisitReplicas(v replicaVisitor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, 0, len(s.mu.replicas))
	for id := range s.mu.replicas {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		v.Visit(s.mu.replicas[id])
	}
}

func main() {
	s := NewStore()
	s.SetSplitTrigger(func(lhs, rhs *Replica) {
		lhs.mu.Lock()
		lease := lhs.mu.leaseholder
		lhs.mu.Unlock()
		rhs.mu.Lock()
		rhs.mu.leaseholder = lease // RHS inherits the LHS lease
		rhs.mu.Unlock()
	})
	var roots []*Replica
	for i, k := range []string{"a", "g", "n", "t"} {
		roots = append(roots, s.AddReplica(k, string(rune(k[0]+6)), i%2 == 0))
	}

	var wg sync.WaitGroup
	for _, r := range roots {
		wg.Add(2)
		go func(r *Replica) { // raft apply loop
			defer wg.Done()
			for j := 0; j < 100; j++ {
				r.Apply(1)
			}
		}(r)
		go func(r *Replica) { // split queue
			defer wg.Done()
			r.mu.Lock()
			start := r.mu.startKey
			r.mu.Unlock()
			for _, suffix := range []string{"m", "f", "c"} {
				s.SplitRange(r.RangeID, start+suffix)
			}
		}(r)
	}
	wg.Add(1)
	go func() { // replica scanner
		defer wg.Done()
		for i := 0; i < 10; i++ {
			s.VisitReplicas(&leaseCounter{})
		}
	}()
	wg.Wait()

	lc := &leaseCounter{}
	s.VisitReplicas(lc)
	fmt.Printf("replicas=%d leaseholders=%d\n", lc.total, lc.held)
}
