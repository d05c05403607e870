// SwarmKit (docker/swarmkit, now moby/swarmkit), PR #1478 "raft: fix stopMu
// deadlock" (August 2016), a regression from PR #1458. The exact call path is
// reconstructed from the raft code of that time.
//
// raft.Node guards its lifetime with stopMu, an RWMutex: every RPC handler
// read-locks it so that the node cannot be torn down underneath it, and
// Node.stop write-locks it when the Run loop shuts the node down. Node.Leave,
// the RPC a manager uses to leave the raft cluster, read-locks stopMu for its
// whole duration, checks that this node is still the leader (a round trip to
// the raft state machine), and then removes the member through the exported
// RemoveMember, which #1458 had also made read-lock stopMu. sync.RWMutex read
// locks are not reentrant: if the Run loop starts shutting down while Leave is
// between its two read locks, stop's Lock waits for Leave's first read lock,
// Leave's second RLock waits behind the pending writer, and every later raft
// RPC (here ProcessRaftMessage) queues behind the writer as well.
//
// The fixed twin has Leave call the unexported removeMember, which expects
// stopMu to be held, so Leave takes the read lock only once.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	ErrNoRaftMember       = errors.New("raft: node is not part of the raft cluster")
	ErrLostLeadership     = errors.New("raft: lost leadership")
	ErrCannotRemoveMember = errors.New("raft: member cannot be removed, because removing it may result in loss of quorum")
)

type RaftMember struct {
	RaftID uint64
	Addr   string
}

type LeaveRequest struct{ Node *RaftMember }
type LeaveResponse struct{}
type RaftMessage struct{ From, To uint64 }

type Cluster struct {
	mu      sync.RWMutex
	members map[uint64]*RaftMember
	removed map[uint64]bool
}

func (c *Cluster) Members() map[uint64]*RaftMember {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m := make(map[uint64]*RaftMember, len(c.members))
	for id, member := range c.members {
		m[id] = member
	}
	return m
}

func (c *Cluster) RemoveMember(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.members, id)
	c.removed[id] = true
}

type raftNode struct {
	leader uint64
}

func (r *raftNode) Status() uint64 {
	time.Sleep(50 * time.Millisecond)
	return r.leader
}

type Node struct {
	id             uint64
	raftNode       *raftNode
	cluster        *Cluster
	stopMu         sync.RWMutex
	membershipLock sync.Mutex
	isMember       uint32
	stopCh         chan struct{}
}

func (n *Node) IsMember() bool { return atomic.LoadUint32(&n.isMember) == 1 }
func (n *Node) isLeader() bool { return n.raftNode.Status() == n.id }

func (n *Node) Leave(ctx context.Context, req *LeaveRequest) (*LeaveResponse, error) {
	n.stopMu.RLock()
	defer n.stopMu.RUnlock()
	if !n.IsMember() {
		return nil, ErrNoRaftMember
	}
	if !n.isLeader() {
		return nil, ErrLostLeadership
	}
	if err := n.RemoveMember(ctx, req.Node.RaftID); err != nil {
		return nil, err
	}
	return &LeaveResponse{}, nil
}

func (n *Node) RemoveMember(ctx context.Context, id uint64) error {
	n.stopMu.RLock()
	defer n.stopMu.RUnlock()
	return n.removeMember(ctx, id)
}

func (n *Node) removeMember(ctx context.Context, id uint64) error {
	if !n.IsMember() {
		return ErrNoRaftMember
	}
	if len(n.cluster.Members()) <= 2 {
		return ErrCannotRemoveMember
	}
	n.membershipLock.Lock()
	defer n.membershipLock.Unlock()
	n.cluster.RemoveMember(id)
	return nil
}

func (n *Node) ProcessRaftMessage(ctx context.Context, msg *RaftMessage) error {
	n.stopMu.RLock()
	defer n.stopMu.RUnlock()
	if !n.IsMember() {
		return ErrNoRaftMember
	}
	if n.cluster.removed[msg.From] {
		return fmt.Errorf("raft: message from removed member %d", msg.From)
	}
	return nil
}

func (n *Node) stop() {
	n.stopMu.Lock()
	defer n.stopMu.Unlock()
	atomic.StoreUint32(&n.isMember, 0)
}

func (n *Node) Run(ctx context.Context) error {
	<-n.stopCh
	n.stop()
	return nil
}

func main() {
	ctx := context.Background()
	members := map[uint64]*RaftMember{}
	for id := uint64(1); id <= 3; id++ {
		members[id] = &RaftMember{RaftID: id, Addr: fmt.Sprintf("10.0.0.%d:2377", id)}
	}
	n := &Node{id: 1, raftNode: &raftNode{leader: 1}, cluster: &Cluster{members: members, removed: map[uint64]bool{}}, isMember: 1, stopCh: make(chan struct{})}
	go n.Run(ctx)

	go func() {
		_, err := n.Leave(ctx, &LeaveRequest{Node: members[3]})
		fmt.Println("manager 3 leave:", err)
	}()
	time.Sleep(10 * time.Millisecond)
	close(n.stopCh)
	time.Sleep(10 * time.Millisecond)
	fmt.Println("raft message from 2:", n.ProcessRaftMessage(ctx, &RaftMessage{From: 2, To: 1}))
}
