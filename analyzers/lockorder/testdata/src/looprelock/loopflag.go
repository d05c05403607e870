package looprelock

import "sync"

// A loop that runs while a flag is false, and unlocks exactly when the
// flag is false: the lock is held past a turn only when the flag is true,
// and then the loop is over (nats-server's raft test holding the lock
// until the leader pops a proposal). Silent.
type Proposals struct {
	mu    sync.Mutex
	queue []int
}

func (p *Proposals) empty() bool { return len(p.queue) == 0 }

func (p *Proposals) HoldUntilPopped() {
	for popped := false; !popped; {
		p.mu.Lock()
		p.queue = append(p.queue, 1)
		for i := 0; !popped && i < 10; i++ {
			popped = p.empty()
		}
		if !popped {
			p.mu.Unlock()
		}
	}
	p.queue = nil
	p.mu.Unlock()
}

// The other way round: unlocked when the flag is true, which ends the
// loop, so a turn that goes on still holds it.
func (p *Proposals) Spin() {
	for done := false; !done; {
		p.mu.Lock() // want `Proposals.mu may still be held from the previous loop iteration \(taken at loopflag.go:\d+\): Lock on the next iteration deadlocks \[lock-leak\]`
		done = p.empty()
		if done {
			p.mu.Unlock()
		}
	}
}
