package retake

import "time"

// A function called with the caller's lock held that lets it go and
// takes it back in a loop (nats-server's raft.isCurrent: Unlock, sleep,
// Lock, up to ten times) returns with the caller's lock held on every
// path: no inconsistent return, and no re-lock on the next iteration.

type Node struct {
	Server
	commit, applied int
	closed          bool
}

// isCurrent runs with n.mu held.
func (n *Node) isCurrent() bool {
	if n.closed {
		return false
	}
	if d := n.commit - n.applied; d > 0 {
		for i := 0; i < 10; i++ {
			n.mu.Unlock()
			time.Sleep(time.Millisecond)
			n.mu.Lock()
			if n.closed {
				return false
			}
			if n.commit-n.applied < d {
				return true
			}
		}
	}
	return false
}

// Healthy holds the lock around isCurrent. Silent.
func (n *Node) Healthy() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.isCurrent()
}

// retry takes the lock back twice when the node closed.
func (n *Node) retry() {
	for i := 0; i < 3; i++ {
		n.mu.Unlock()
		time.Sleep(time.Millisecond)
		n.mu.Lock()
		if n.closed {
			n.mu.Lock() // want `Server.mu locked again while held since loop.go:\d+: self-deadlock \[double-lock\]`
			return
		}
	}
}
