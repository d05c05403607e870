// hashicorp/raft: observe() held observersLock (read) while doing a blocking
// send to each blocking observer's channel. An observer goroutine that
// decided to DeregisterObserver (write lock) stopped receiving, so the raft
// goroutine blocked on the send forever with the read lock held, and the
// deregistration blocked on the lock. FIXED TWIN: observers are snapshotted
// under the read lock and sent to after releasing it; deregistration closes a
// done channel so a pending send is abandoned.
package main

import (
	"context"
	"fmt"

	"example.com/recall/raftobs_fixed/raft"
)

func main() {
	r := raft.New()
	ch := make(chan raft.Observation)
	obs := raft.NewObserver(ch, true)
	r.RegisterObserver(obs)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case o := <-ch:
				fmt.Println("leader", o.Leader, "term", o.Term)
				if o.Term >= 3 {
					r.DeregisterObserver(obs)
					return
				}
			}
		}
	}()

	r.Run(10)
	cancel()
	<-done
}
