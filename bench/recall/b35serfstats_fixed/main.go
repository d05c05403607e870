// Project: hashicorp/serf (serf/serf.go, serf/delegate.go) with hashicorp/memberlist (queue.go), as vendored by Consul 1.0.x
// Issue: hashicorp/consul#4011 "'consul members' command hangs on the agents", fixed by hashicorp/serf PR #507 "Fix for deadlock between stats() in serf and getBroadcasts() in memberlist"
//
// Fixed twin: as in serf PR #507, Stats copies the member counts under
// memberLock and releases it before calling NumQueued on the broadcast queues,
// so it never waits for a queue lock while holding memberLock.
package main

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"
)

// ---- memberlist/queue.go ----

type Broadcast interface {
	Message() []byte
}

type limitedBroadcast struct {
	transmits int
	b         Broadcast
}

// TransmitLimitedQueue is used to queue messages to broadcast to the cluster
// (via gossip) but limits the number of transmits per message.
type TransmitLimitedQueue struct {
	// NumNodes returns the number of nodes in the cluster. This is
	// used to determine the retransmit count, which is calculated
	// based on the log of this.
	NumNodes func() int

	// RetransmitMult is the multiplier used to determine the maximum
	// number of retransmissions attempted.
	RetransmitMult int

	sync.Mutex
	bcQueue []*limitedBroadcast
}

func retransmitLimit(retransmitMult, n int) int {
	nodeScale := math.Ceil(math.Log10(float64(n + 1)))
	return retransmitMult * int(nodeScale)
}

// GetBroadcasts is used to get a number of broadcasts, up to a byte limit
// and applying a per-message overhead as provided.
func (q *TransmitLimitedQueue) GetBroadcasts(overhead, limit int) [][]byte {
	q.Lock()
	defer q.Unlock()

	// Fast path the default case
	if len(q.bcQueue) == 0 {
		return nil
	}

	transmitLimit := retransmitLimit(q.RetransmitMult, q.NumNodes())
	var toSend [][]byte
	for _, b := range q.bcQueue {
		msg := b.b.Message()
		if len(msg)+overhead > limit {
			continue
		}
		limit -= len(msg) + overhead
		toSend = append(toSend, msg)
		b.transmits++
	}
	kept := q.bcQueue[:0]
	for _, b := range q.bcQueue {
		if b.transmits < transmitLimit {
			kept = append(kept, b)
		}
	}
	q.bcQueue = kept
	return toSend
}

// NumQueued returns the number of queued messages
func (q *TransmitLimitedQueue) NumQueued() int {
	q.Lock()
	defer q.Unlock()
	return len(q.bcQueue)
}

// QueueBroadcast is used to enqueue a broadcast
func (q *TransmitLimitedQueue) QueueBroadcast(b Broadcast) {
	q.Lock()
	defer q.Unlock()
	q.bcQueue = append(q.bcQueue, &limitedBroadcast{b: b})
}

// ---- serf ----

type memberState struct {
	Name   string
	Status string
}

type broadcast struct{ msg []byte }

func (b *broadcast) Message() []byte { return b.msg }

type Serf struct {
	memberLock    sync.RWMutex
	members       map[string]*memberState
	failedMembers []*memberState
	leftMembers   []*memberState

	broadcasts      *TransmitLimitedQueue
	eventBroadcasts *TransmitLimitedQueue
	queryBroadcasts *TransmitLimitedQueue
}

// NumNodes returns the number of nodes in the serf cluster, regardless of
// their health or status.
func (s *Serf) NumNodes() (numNodes int) {
	s.memberLock.RLock()
	numNodes = len(s.members)
	s.memberLock.RUnlock()
	return numNodes
}

// getHealthScore reads memberlist's awareness score; it contends on the
// awareness lock with the probe loop.
func (s *Serf) getHealthScore() int {
	time.Sleep(60 * time.Millisecond)
	return 0
}

// Stats is used to provide operator debugging information
func (s *Serf) Stats() map[string]string {
	toString := func(v uint64) string {
		return strconv.FormatUint(v, 10)
	}
	s.memberLock.RLock()
	members := toString(uint64(len(s.members)))
	failed := toString(uint64(len(s.failedMembers)))
	left := toString(uint64(len(s.leftMembers)))
	healthScore := toString(uint64(s.getHealthScore()))
	s.memberLock.RUnlock()

	// The broadcast queues take their own lock and call back into NumNodes,
	// so read them without holding memberLock.
	stats := map[string]string{
		"members":      members,
		"failed":       failed,
		"left":         left,
		"health_score": healthScore,
		"intent_queue": toString(uint64(s.broadcasts.NumQueued())),
		"event_queue":  toString(uint64(s.eventBroadcasts.NumQueued())),
		"query_queue":  toString(uint64(s.queryBroadcasts.NumQueued())),
	}
	return stats
}

// handleNodeJoin is called when a node join event is received
// from memberlist (memberlist's EventDelegate.NotifyJoin).
func (s *Serf) handleNodeJoin(name string) {
	s.memberLock.Lock()
	defer s.memberLock.Unlock()
	s.members[name] = &memberState{Name: name, Status: "alive"}
}

// delegate is serf's memberlist.Delegate.
type delegate struct {
	serf *Serf
}

func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	msgs := d.serf.broadcasts.GetBroadcasts(overhead, limit)
	eventMsgs := d.serf.eventBroadcasts.GetBroadcasts(overhead, limit)
	return append(msgs, eventMsgs...)
}

func newSerf() *Serf {
	s := &Serf{members: map[string]*memberState{"consul-server-1": {Name: "consul-server-1", Status: "alive"}}}
	s.broadcasts = &TransmitLimitedQueue{NumNodes: s.NumNodes, RetransmitMult: 4}
	s.eventBroadcasts = &TransmitLimitedQueue{NumNodes: s.NumNodes, RetransmitMult: 4}
	s.queryBroadcasts = &TransmitLimitedQueue{NumNodes: s.NumNodes, RetransmitMult: 4}
	return s
}

func main() {
	s := newSerf()
	d := &delegate{serf: s}
	s.broadcasts.QueueBroadcast(&broadcast{msg: []byte("join consul-client-17")})

	var wg sync.WaitGroup
	wg.Add(3)

	// GET /v1/agent/self (consul members, agent stats).
	go func() {
		defer wg.Done()
		fmt.Println("stats:", s.Stats())
	}()

	// memberlist delivers a join for a new node.
	go func() {
		defer wg.Done()
		time.Sleep(15 * time.Millisecond)
		s.handleNodeJoin("consul-client-18")
	}()

	// memberlist's gossip loop piggybacks serf broadcasts.
	go func() {
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		fmt.Println("gossip:", len(d.GetBroadcasts(2, 1400)), "messages")
	}()

	wg.Wait()
}
