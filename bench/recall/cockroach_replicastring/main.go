// Project: CockroachDB (pkg/storage/replica.go)
// Bug: Replica.String() acquires r.mu to read the range descriptor. setDesc
//
//	holds r.mu and, on its sanity-check error path, formats the replica
//	with "%s" (fmt calls r.String() implicitly), which tries to take r.mu
//	again on the same goroutine: the split-trigger apply path self-deadlocks
//	and every later request touching the replica piles up behind r.mu.
//
// Upstream fix: not recalled by number; CockroachDB introduced an
//
//	atomicDescString (r.rangeStr) so Replica.String() never takes r.mu.
package main

import (
	"fmt"
	"sync"
	"time"
)

type RangeID int64
type NodeID int32
type StoreID int32

type RangeDescriptor struct {
	RangeID  RangeID
	StartKey string
	EndKey   string
}

type StoreIdent struct {
	NodeID  NodeID
	StoreID StoreID
}

type Store struct{ Ident StoreIdent }

type Replica struct {
	RangeID RangeID
	store   *Store

	mu struct {
		sync.Mutex
		desc          *RangeDescriptor
		lastIndex     uint64
		destroyStatus error
	}
}

// String returns the string representation of the replica using an
// inconsistent copy of the range descriptor.
func (r *Replica) String() string {
	r.mu.Lock() // DEADLOCK HERE
	defer r.mu.Unlock()
	return fmt.Sprintf("[n%d,s%d,r%d/%s-%s]", r.store.Ident.NodeID, r.store.Ident.StoreID,
		r.RangeID, r.mu.desc.StartKey, r.mu.desc.EndKey)
}

// setDesc atomically sets the range's descriptor.
func (r *Replica) setDesc(desc *RangeDescriptor) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if desc.RangeID != r.RangeID {
		return fmt.Errorf("%s: cannot set replica's descriptor to one for r%d", r, desc.RangeID)
	}
	r.mu.desc = desc
	return nil
}

func (r *Replica) Desc() *RangeDescriptor {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.mu.desc
}

// splitTrigger is applied below raft on the left-hand side of a split.
func splitTrigger(lhs *Replica, leftDesc, rightDesc RangeDescriptor) error {
	// BUG (as in the incident): the trigger mistakenly installs the RHS
	// descriptor on the LHS replica, which setDesc rejects.
	if err := lhs.setDesc(&rightDesc); err != nil {
		return err
	}
	return nil
}

func main() {
	store := &Store{Ident: StoreIdent{NodeID: 1, StoreID: 1}}
	r := &Replica{RangeID: 7, store: store}
	r.mu.desc = &RangeDescriptor{RangeID: 7, StartKey: "/Table/51", EndKey: "/Max"}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // raft apply goroutine
		defer wg.Done()
		left := RangeDescriptor{RangeID: 7, StartKey: "/Table/51", EndKey: "/Table/52"}
		right := RangeDescriptor{RangeID: 8, StartKey: "/Table/52", EndKey: "/Max"}
		if err := splitTrigger(r, left, right); err != nil {
			fmt.Println("split trigger failed:", err)
		}
	}()
	go func() { // replica scanner
		defer wg.Done()
		for i := 0; i < 5; i++ {
			time.Sleep(5 * time.Millisecond)
			d := r.Desc()
			fmt.Printf("scanner: r%d [%s,%s)\n", d.RangeID, d.StartKey, d.EndKey)
		}
	}()
	wg.Wait()
}
