// Project: nats-io/nats-streaming-server (server/server.go: StanServer.processAck, sendAvailableMessagesToQueue, sendMsgToQueueGroup, findBestQueueSub), 0.x releases around 2017-2018 (approximate reconstruction).
// Bug: processAck locked the member's subState and then, for a queue subscriber, the shared queueState to clear the stalled flag, while the queue delivery path holds qs.Lock and then read-locks every member in findBestQueueSub and locks the chosen one; an ack racing a delivery to the same queue group is an AB-BA deadlock. The fix grabs the queue's lock before the sub's lock in processAck ("If we have a queue group, we want to grab queue's lock before sub's lock").
package main

import (
	"fmt"
	"sync"
	"time"
)

type MsgProto struct {
	Sequence uint64
	Subject  string
	Data     []byte
}

// msgStore stands in for stores.MsgStore.
type msgStore struct {
	sync.RWMutex
	msgs map[uint64]*MsgProto
	last uint64
}

func (ms *msgStore) Lookup(seq uint64) *MsgProto {
	ms.RLock()
	defer ms.RUnlock()
	time.Sleep(20 * time.Millisecond) // file store read
	return ms.msgs[seq]
}

type queueState struct {
	sync.RWMutex
	lastSent        uint64
	subs            []*subState
	stalledSubCount int
}

type subState struct {
	sync.RWMutex
	ClientID    string
	Inbox       string
	MaxInFlight int32
	acksPending map[uint64]int64
	stalled     bool
	hasFailedHB bool
	qstate      *queueState
	sent        []uint64
}

type subStore struct {
	sync.RWMutex
	qsubs map[string]*queueState
}

type channel struct {
	name  string
	store *msgStore
	ss    *subStore
}

type StanServer struct {
	channels map[string]*channel
}

func findBestQueueSub(sl []*subState) *subState {
	var (
		leastOutstanding = int(^uint(0) >> 1)
		rsub             *subState
	)
	for _, sub := range sl {
		sub.RLock()
		sOut := len(sub.acksPending)
		sStalled := sub.stalled
		sHasFailedHB := sub.hasFailedHB
		sub.RUnlock()
		if sStalled || sHasFailedHB {
			continue
		}
		if rsub == nil || sOut < leastOutstanding {
			leastOutstanding = sOut
			rsub = sub
		}
	}
	return rsub
}

// sendMsgToSub is called with sub's lock held.
func (s *StanServer) sendMsgToSub(sub *subState, m *MsgProto) bool {
	if int32(len(sub.acksPending)) >= sub.MaxInFlight {
		sub.stalled = true
		return false
	}
	sub.acksPending[m.Sequence] = time.Now().UnixNano()
	sub.sent = append(sub.sent, m.Sequence)
	return true
}

// sendMsgToQueueGroup is called with qs's lock held.
func (s *StanServer) sendMsgToQueueGroup(qs *queueState, m *MsgProto) (*subState, bool) {
	sub := findBestQueueSub(qs.subs)
	if sub == nil {
		return nil, false
	}
	sub.Lock()
	wasStalled := sub.stalled
	didSend := s.sendMsgToSub(sub, m)
	if !wasStalled && sub.stalled {
		qs.stalledSubCount++
	}
	sub.Unlock()
	return sub, didSend
}

func (s *StanServer) sendAvailableMessagesToQueue(c *channel, qs *queueState) {
	qs.Lock()
	defer qs.Unlock()
	for nextSeq := qs.lastSent + 1; ; nextSeq++ {
		m := c.store.Lookup(nextSeq)
		if m == nil {
			return
		}
		if _, sent := s.sendMsgToQueueGroup(qs, m); !sent {
			return
		}
		qs.lastSent = nextSeq
	}
}

func (s *StanServer) processAck(c *channel, sub *subState, sequence uint64) {
	sub.Lock()
	delete(sub.acksPending, sequence)
	stalled := sub.stalled
	if int32(len(sub.acksPending)) < sub.MaxInFlight {
		sub.stalled = false
	}
	time.Sleep(20 * time.Millisecond) // store.AckSeqPending(...)
	qs := sub.qstate
	if qs != nil {
		qs.Lock()
		if stalled {
			qs.stalledSubCount--
		}
		qs.Unlock()
	}
	sub.Unlock()

	if stalled && qs != nil {
		s.sendAvailableMessagesToQueue(c, qs)
	}
}

func main() {
	qs := &queueState{lastSent: 1}
	member := &subState{ClientID: "worker-1", Inbox: "_INBOX.w1", MaxInFlight: 1,
		acksPending: map[uint64]int64{1: time.Now().UnixNano()}, stalled: true, qstate: qs}
	qs.subs = append(qs.subs, member)
	qs.stalledSubCount = 1
	store := &msgStore{msgs: map[uint64]*MsgProto{}}
	for seq := uint64(1); seq <= 3; seq++ {
		store.msgs[seq] = &MsgProto{Sequence: seq, Subject: "jobs"}
		store.last = seq
	}
	c := &channel{name: "jobs", store: store, ss: &subStore{qsubs: map[string]*queueState{"workers:jobs": qs}}}
	s := &StanServer{channels: map[string]*channel{"jobs": c}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // ack handler for worker-1
		defer wg.Done()
		s.processAck(c, member, 1)
	}()
	go func() { // new message published on the channel, delivered to the queue group
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		s.sendAvailableMessagesToQueue(c, qs)
	}()
	wg.Wait()
	fmt.Println("delivered:", member.sent, "lastSent:", qs.lastSent)
}
