// FIXED twin. Project: moby/swarmkit — manager/state/raft/raft.go
// Issue: moby/swarmkit#1342; fix PR moby/swarmkit#1347
// ("raft: Avoid double lock of stopMu").
//
// Node.LeaderAddr acquires n.stopMu for reading (to check isShutdown) and then
// calls WaitForLeader, which calls n.Leader(), which acquires n.stopMu.RLock()
// again. If Shutdown/stop() (n.stopMu.Lock()) is called between the two read
// locks, the writer waits for LeaderAddr's outer read lock, and Go's RWMutex
// blocks the nested RLock behind the pending writer: LeaderAddr blocks in
// Leader() at n.stopMu.RLock() (line 58) and stop() blocks at n.stopMu.Lock()
// (line 107) forever.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var (
	ErrStopped         = errors.New("raft: failed to process the request: node is stopped")
	ErrNoClusterLeader = errors.New("raft: no elected cluster leader")
)

type Status struct{ Lead uint64 }

// raftNode stands in for etcd/raft's raft.Node
type raftNode struct{ lead uint64 }

func (r *raftNode) Status() Status { return Status{Lead: r.lead} }

type member struct{ Addr string }

type cluster struct{ members map[uint64]*member }

func (c *cluster) GetMember(id uint64) *member { return c.members[id] }

type Node struct {
	raftNode *raftNode
	cluster  *cluster
	Ctx      context.Context
	cancel   func()

	// stopMu is used for performing shutdown. We want to guarantee that
	// Status() calls finish before the node is stopped.
	stopMu     sync.RWMutex
	isShutdown bool

	leaderAddrHook func() // test hook
}

func (n *Node) IsMember() bool { return true }

// Leader returns the id of the leader
func (n *Node) Leader() uint64 {
	n.stopMu.RLock()
	defer n.stopMu.RUnlock()
	if !n.IsMember() {
		return 0
	}
	return n.raftNode.Status().Lead
}

// WaitForLeader waits until node observe some leader in cluster. It returns
// error if ctx was cancelled before leader appeared.
func WaitForLeader(ctx context.Context, n *Node) error {
	l := n.Leader()
	if l != 0 {
		return nil
	}
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	for l == 0 {
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		l = n.Leader()
	}
	return nil
}

// LeaderAddr returns address of current cluster leader.
func (n *Node) LeaderAddr() (string, error) {
	// FIX (PR #1347): the isShutdown check and its stopMu read lock are
	// removed; Leader() protects itself with stopMu individually.
	n.leaderAddrHook()
	ctx, cancel := context.WithTimeout(n.Ctx, 10*time.Second)
	defer cancel()
	if err := WaitForLeader(ctx, n); err != nil {
		return "", ErrNoClusterLeader
	}
	l := n.cluster.GetMember(n.Leader())
	if l == nil {
		return "", errors.New("no leader found")
	}
	return l.Addr, nil
}

func (n *Node) stop() {
	n.stopMu.Lock()
	defer n.stopMu.Unlock()
	n.cancel()
	n.isShutdown = true
}

// Shutdown stops the raft node processing loop.
func (n *Node) Shutdown() { n.stop() }

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	n := &Node{
		raftNode: &raftNode{lead: 1},
		cluster:  &cluster{members: map[uint64]*member{1: {Addr: "10.0.0.1:4242"}}},
		Ctx:      ctx,
		cancel:   cancel,
	}
	inLeaderAddr := make(chan struct{})
	n.leaderAddrHook = func() {
		close(inLeaderAddr)
		time.Sleep(100 * time.Millisecond) // let Shutdown queue its write lock
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // dispatcher / controlapi asking for the leader address
		defer wg.Done()
		addr, err := n.LeaderAddr()
		fmt.Println("leader:", addr, err)
	}()
	go func() { // manager shutting down (demotion / leave)
		defer wg.Done()
		<-inLeaderAddr
		n.Shutdown()
	}()
	wg.Wait()
	fmt.Println("done")
}
