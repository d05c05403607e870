package loopvariant

import "sync"

// Each element of a range, or each index of a slice, is another lock on
// the next iteration: locking them all with deferred unlocks is no
// re-lock (a nats-server test holds every server's receive queue this
// way).

type queue struct{ sync.Mutex }

type server struct {
	mu    sync.RWMutex
	recvq *queue
}

// holdAll locks each server's queue until it returns. Silent.
func holdAll(a, b *server) {
	for _, s := range []*server{a, b} {
		s.mu.RLock()
		q := s.recvq
		s.mu.RUnlock()
		q.Lock()
		defer q.Unlock()
	}
}

// holdEach indexes the slice. Silent.
func holdEach(ss []*server) {
	for i := range ss {
		ss[i].recvq.Lock()
		defer ss[i].recvq.Unlock()
	}
}

// holdFirst locks the first server's queue on every iteration.
func holdFirst(ss []*server) {
	for range ss {
		ss[0].recvq.Lock() // want `queue.Mutex may still be held from the previous loop iteration`
		defer ss[0].recvq.Unlock()
	}
}
