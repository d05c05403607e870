// Project: hashicorp/consul — agent/consul/state/tombstone_gc.go, leader.go, fsm
// Issue: hashicorp/consul#3700 ("Hang in /v1/agent/self"); fix PR
// hashicorp/consul#3701 ("Gives back the lock before writing to the expire
// channel").
//
// TombstoneGC.expireTime runs from a time.AfterFunc timer. It held t.lock
// (deferred unlock) while sending the expired index on t.expireCh, which is
// only drained by the leader loop. The leader loop was itself blocked waiting
// for a raft Barrier to commit; the barrier needs the FSM to apply pending
// entries, and applying a KV delete calls TombstoneGC.Hint, which needs
// t.lock. Cycle: timer holds t.lock and blocks on the channel send (line 85),
// FSM blocks on t.lock.Lock() in Hint (line 64), leader blocks on the barrier.
package main

import (
	"fmt"
	"sync"
	"time"
)

type expireInterval struct {
	maxIndex uint64
	timer    *time.Timer
}

// TombstoneGC is used to track creation of tombstones so that they can be
// garbage collected after their TTL expires.
type TombstoneGC struct {
	ttl         time.Duration
	granularity time.Duration
	enabled     bool
	expires     map[time.Time]*expireInterval
	expireCh    chan uint64
	lock        sync.Mutex
}

func NewTombstoneGC(ttl, granularity time.Duration) *TombstoneGC {
	return &TombstoneGC{
		ttl:         ttl,
		granularity: granularity,
		expires:     make(map[time.Time]*expireInterval),
		expireCh:    make(chan uint64, 1),
	}
}

func (t *TombstoneGC) ExpireCh() <-chan uint64 { return t.expireCh }

func (t *TombstoneGC) SetEnabled(enabled bool) {
	t.lock.Lock()
	defer t.lock.Unlock()
	t.enabled = enabled
}

func (t *TombstoneGC) nextExpires() time.Time {
	expires := time.Now().Add(t.ttl).Round(0)
	adj := expires.Add(t.granularity)
	return adj.Truncate(t.granularity)
}

// Hint is used to indicate that keys at the given index have been deleted,
// and that their GC should be scheduled.
func (t *TombstoneGC) Hint(index uint64) {
	expires := t.nextExpires()
	t.lock.Lock() // FSM blocks here while the timer goroutine holds t.lock
	defer t.lock.Unlock()
	if !t.enabled {
		return
	}
	if exp, ok := t.expires[expires]; ok {
		if index > exp.maxIndex {
			exp.maxIndex = index
		}
		return
	}
	t.expires[expires] = &expireInterval{maxIndex: index,
		timer: time.AfterFunc(time.Until(expires), func() { t.expireTime(expires) })}
}

// expireTime is used to expire the entries at the given time.
func (t *TombstoneGC) expireTime(expires time.Time) {
	t.lock.Lock()
	defer t.lock.Unlock()
	exp := t.expires[expires]
	delete(t.expires, expires)
	t.expireCh <- exp.maxIndex // blocks with t.lock held: leader is not draining
}

// --- minimal raft / FSM / leader loop -------------------------------------

type logEntry struct {
	index uint64
	done  chan struct{}
}

type Server struct {
	tombstoneGC *TombstoneGC
	applyCh     chan logEntry
}

// fsm applies committed entries; a KVS delete leaves a tombstone and hints the GC.
func (s *Server) runFSM() {
	for e := range s.applyCh {
		s.tombstoneGC.Hint(e.index)
		close(e.done)
	}
}

// Barrier is satisfied once the FSM has applied everything before it.
func (s *Server) Barrier(index uint64) <-chan struct{} {
	done := make(chan struct{})
	s.applyCh <- logEntry{index: index, done: done}
	return done
}

func (s *Server) leaderLoop(stop chan struct{}) {
	<-s.Barrier(30) // establish leadership: wait for the barrier to commit
	reaped := 0
	for reaped < 2 {
		select {
		case index := <-s.tombstoneGC.ExpireCh():
			fmt.Println("reaping tombstones up to index", index)
			reaped++
		case <-stop:
			return
		}
	}
}

func main() {
	gc := NewTombstoneGC(40*time.Millisecond, 10*time.Millisecond)
	gc.SetEnabled(true)
	s := &Server{tombstoneGC: gc, applyCh: make(chan logEntry)}
	go s.runFSM()

	// two deletes in different expiration bins
	gc.Hint(10)
	time.Sleep(25 * time.Millisecond)
	gc.Hint(20)
	// both bins expire; the first index fills expireCh, the second timer
	// blocks on the send while holding t.lock
	time.Sleep(150 * time.Millisecond)

	done := make(chan struct{})
	go func() { s.leaderLoop(make(chan struct{})); close(done) }()
	<-done
	fmt.Println("leader established")
}
