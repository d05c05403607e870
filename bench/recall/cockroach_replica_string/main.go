// Modeled on CockroachDB's storage.Replica: Replica.String() acquires
// r.mu.RLock() to read the range descriptor, and code already holding
// r.mu.RLock() logged the replica with %s, implicitly re-acquiring the
// RWMutex for reading. With a writer (setDesc during a split/merge) queued
// in between, the nested RLock blocks forever (fixed by formatting with a
// lock-free replica ID / using the *Locked variants).
package main

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"time"
)

type RangeDescriptor struct {
	RangeID  int64
	StartKey string
	EndKey   string
}

type Replica struct {
	RangeID int64
	mu      struct {
		sync.RWMutex
		desc      *RangeDescriptor
		destroyed error
	}
}

func (r *Replica) String() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return fmt.Sprintf("[n1,s1,r%d/%s-%s]", r.RangeID, r.mu.desc.StartKey, r.mu.desc.EndKey)
}

func (r *Replica) setDesc(desc *RangeDescriptor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.desc = desc
}

func (r *Replica) destroy(reason error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.destroyed = reason
}

func (r *Replica) checkDestroyed() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.mu.destroyed != nil {
		log.Printf("%s: replica destroyed: %v", r, r.mu.destroyed)
		return r.mu.destroyed
	}
	return nil
}

func main() {
	r := &Replica{RangeID: 7}
	r.mu.desc = &RangeDescriptor{RangeID: 7, StartKey: "a", EndKey: "z"}
	r.destroy(errors.New("removed from range"))

	go func() { // split trigger
		for i := 0; i < 100; i++ {
			r.setDesc(&RangeDescriptor{RangeID: 7, StartKey: "a", EndKey: fmt.Sprint("m", i)})
		}
	}()
	go func() { // request evaluation
		for i := 0; i < 100; i++ {
			_ = r.checkDestroyed()
		}
	}()
	time.Sleep(50 * time.Millisecond)
}
