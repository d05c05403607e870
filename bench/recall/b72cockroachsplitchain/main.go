// Command b72cockroachsplitchain models the layers an AdminSplit request
// crosses in CockroachDB (pkg/server, pkg/kv/kvserver, raft, Pebble).
//
// Modelled on cockroach, no specific upstream bug. Store.AdminSplit takes the
// store mutex s.mu to keep replicasByKey stable until the right-hand replica
// is installed, and proposes the split trigger while holding it. The proposal
// goes down unconditionally through adminSplitWithDescriptor, proposeSplit,
// propose, RawNode.Propose, raftLog.append, replicaRaftStorage.Append,
// pebbleBatch.Commit and Pebble.notifyCommit to the engine listener
// Store.OnCommit, which calls Store.recomputeCapacity, which takes s.mu.RLock: ten
// calls from the Lock to the RLock on the same goroutine. The store
// rebalancer goroutine then also blocks reading the replica count.
//
// The fixed twin holds s.mu only to look the replica up and again to install
// the right-hand replica, not across the proposal.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

type RangeDescriptor struct {
	RangeID int64
	EndKey  string
}

type EventListener interface{ OnCommit(bytes int) }

type Pebble struct {
	data     map[string][]byte
	listener EventListener
}

type pebbleBatch struct {
	eng  *Pebble
	puts map[string][]byte
}

func (b *pebbleBatch) Commit(sync bool) error {
	for k, v := range b.puts {
		b.eng.data[k] = v
	}
	b.eng.notifyCommit(len(b.puts))
	return nil
}

func (p *Pebble) notifyCommit(bytes int) {
	p.listener.OnCommit(bytes)
}

type replicaRaftStorage struct {
	rangeID int64
	engine  *Pebble
}

func (rs *replicaRaftStorage) Append(first uint64, ents [][]byte) error {
	b := &pebbleBatch{eng: rs.engine, puts: map[string][]byte{}}
	for i, e := range ents {
		b.puts[fmt.Sprintf("/Local/RangeID/%d/u/RaftLog/%d", rs.rangeID, first+uint64(i))] = e
	}
	return b.Commit(true)
}

type raftLog struct {
	lastIndex uint64
	storage   *replicaRaftStorage
}

func (l *raftLog) append(ents ...[]byte) error {
	first := l.lastIndex + 1
	l.lastIndex += uint64(len(ents))
	return l.storage.Append(first, ents)
}

type RawNode struct{ raftLog *raftLog }

func (rn *RawNode) Propose(data []byte) error {
	return rn.raftLog.append(data)
}

type Replica struct {
	store     *Store
	raftMu    sync.Mutex
	desc      RangeDescriptor
	raftGroup *RawNode
}

func (r *Replica) propose(ctx context.Context, cmd []byte) error {
	r.raftMu.Lock()
	defer r.raftMu.Unlock()
	return r.raftGroup.Propose(cmd)
}

func (r *Replica) proposeSplit(ctx context.Context, left, right RangeDescriptor) error {
	return r.propose(ctx, []byte(fmt.Sprintf("split-trigger lhs=%v rhs=%v", left, right)))
}

func (r *Replica) adminSplitWithDescriptor(ctx context.Context, splitKey string, rhsID int64) (RangeDescriptor, error) {
	left := RangeDescriptor{RangeID: r.desc.RangeID, EndKey: splitKey}
	right := RangeDescriptor{RangeID: rhsID, EndKey: r.desc.EndKey}
	err := r.proposeSplit(ctx, left, right)
	return right, err
}

func (s *Store) OnCommit(bytes int) {
	s.recomputeCapacity(bytes)
}

type Store struct {
	engine *Pebble
	mu     struct {
		sync.RWMutex
		replicasByKey []*Replica
		nextRangeID   int64
	}
	capacity atomic.Int64
}

func (s *Store) lookupReplicaLocked(key string) *Replica {
	i := sort.Search(len(s.mu.replicasByKey), func(i int) bool { return s.mu.replicasByKey[i].desc.EndKey > key })
	return s.mu.replicasByKey[i]
}

func (s *Store) recomputeCapacity(delta int) {
	s.mu.RLock()
	n := int64(len(s.mu.replicasByKey))
	s.mu.RUnlock()
	s.capacity.Add(int64(delta) + n)
}

func (s *Store) ReplicaCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.mu.replicasByKey)
}

func (s *Store) newReplica(desc RangeDescriptor) *Replica {
	r := &Replica{store: s, desc: desc}
	r.raftGroup = &RawNode{raftLog: &raftLog{storage: &replicaRaftStorage{rangeID: desc.RangeID, engine: s.engine}}}
	return r
}

func (s *Store) AdminSplit(ctx context.Context, splitKey string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.lookupReplicaLocked(splitKey)
	s.mu.nextRangeID++
	right, err := r.adminSplitWithDescriptor(ctx, splitKey, s.mu.nextRangeID)
	if err != nil {
		return err
	}
	r.desc.EndKey = splitKey
	s.mu.replicasByKey = append(s.mu.replicasByKey, s.newReplica(right))
	sort.Slice(s.mu.replicasByKey, func(i, j int) bool { return s.mu.replicasByKey[i].desc.EndKey < s.mu.replicasByKey[j].desc.EndKey })
	return nil
}

type Node struct {
	storeID int
	stores  map[int]*Store
}

func (n *Node) AdminSplit(ctx context.Context, key string) error {
	return n.stores[n.storeID].AdminSplit(ctx, key)
}

type Server struct{ node *Node }

func (s *Server) AdminSplit(ctx context.Context, key string) error {
	return s.node.AdminSplit(ctx, key)
}

func main() {
	store := &Store{engine: &Pebble{data: map[string][]byte{}}}
	store.engine.listener = store
	store.mu.nextRangeID = 1
	store.mu.replicasByKey = []*Replica{store.newReplica(RangeDescriptor{RangeID: 1, EndKey: "\xff\xff"})}
	srv := &Server{node: &Node{storeID: 1, stores: map[int]*Store{1: store}}}

	go func() {
		time.Sleep(50 * time.Millisecond)
		fmt.Println("rebalancer sees", store.ReplicaCount(), "replicas")
	}()

	for _, key := range []string{"/Table/53", "/Table/106"} {
		if err := srv.AdminSplit(context.Background(), key); err != nil {
			fmt.Println("split:", err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	fmt.Println("store has", store.ReplicaCount(), "ranges, capacity gauge", store.capacity.Load())
}
