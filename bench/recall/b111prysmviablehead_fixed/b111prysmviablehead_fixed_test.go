// Project: prysmaticlabs/prysm (beacon-chain/forkchoice/protoarray/store.go Store.head, Store.viableForHead, Store.leadsToViableHead; forkchoice.go ForkChoice.Head, UpdateJustifiedCheckpoint), v2.1.4, August 2022 (PR #11217 "release checkpoints lock from store.head", follow-up audit in PR #11271).
// Bug: Store.head read-locks s.checkpointsLock with a deferred RUnlock and, still holding it, asks s.viableForHead whether the best descendant may be head; viableForHead read-locks checkpointsLock again because it is also called from updateBestChildAndDescendant. When the blockchain service calls UpdateJustifiedCheckpoint (checkpointsLock.Lock) between the two read locks, the nested RLock queues behind the writer and the writer waits for head, so fork choice (and every caller of Head, InsertNode or the checkpoint getters) hangs. The fix releases checkpointsLock in head before calling viableForHead.
package b111prysmviableheadfixed

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

const NonExistentNode = ^uint64(0)

type Checkpoint struct {
	Epoch uint64
	Root  [32]byte
}

type Node struct {
	slot           uint64
	root           [32]byte
	parent         uint64
	justifiedEpoch uint64
	finalizedEpoch uint64
	weight         uint64
	bestChild      uint64
	bestDescendant uint64
}

type Store struct {
	nodesLock               sync.RWMutex
	nodes                   []*Node
	nodesIndices            map[[32]byte]uint64
	checkpointsLock         sync.RWMutex
	justifiedCheckpoint     *Checkpoint
	finalizedCheckpoint     *Checkpoint
	prevJustifiedCheckpoint *Checkpoint
	lastHeadRoot            [32]byte
	allTipsAreInvalid       bool
}

type ForkChoice struct {
	store     *Store
	votesLock sync.RWMutex
	balances  []uint64
}

var errUnknownJustifiedRoot = errors.New("unknown justified root")

// Head recomputes weights and returns the head root.
func (f *ForkChoice) Head(ctx context.Context, justifiedStateBalances []uint64) ([32]byte, error) {
	f.votesLock.Lock()
	defer f.votesLock.Unlock()
	f.store.nodesLock.Lock()
	defer f.store.nodesLock.Unlock()
	f.store.applyWeightChanges()
	f.balances = justifiedStateBalances
	return f.store.head(ctx)
}

// applyWeightChanges walks the nodes backwards; it assumes a lock on nodesLock.
func (s *Store) applyWeightChanges() {
	for i := len(s.nodes) - 1; i >= 0; i-- {
		n := s.nodes[i]
		if n.parent != NonExistentNode {
			s.updateBestChildAndDescendant(n.parent, uint64(i))
		}
	}
}

func (s *Store) updateBestChildAndDescendant(parentIndex, childIndex uint64) {
	parent, child := s.nodes[parentIndex], s.nodes[childIndex]
	if s.leadsToViableHead(child) {
		parent.bestChild = childIndex
		parent.bestDescendant = childIndex
		if child.bestDescendant != NonExistentNode {
			parent.bestDescendant = child.bestDescendant
		}
	}
}

func (s *Store) leadsToViableHead(node *Node) bool {
	if node.bestDescendant != NonExistentNode && s.viableForHead(s.nodes[node.bestDescendant]) {
		return true
	}
	return s.viableForHead(node)
}

// viableForHead returns true if the node is viable to head.
func (s *Store) viableForHead(node *Node) bool {
	s.checkpointsLock.RLock()
	defer s.checkpointsLock.RUnlock()
	justified := s.justifiedCheckpoint.Epoch == node.justifiedEpoch || s.justifiedCheckpoint.Epoch == 0
	finalized := s.finalizedCheckpoint.Epoch == node.finalizedEpoch || s.finalizedCheckpoint.Epoch == 0
	return justified && finalized
}

// head follows the best descendant of the justified node. It assumes the
// caller holds nodesLock.
func (s *Store) head(ctx context.Context) ([32]byte, error) {
	s.checkpointsLock.RLock()
	if err := ctx.Err(); err != nil {
		s.checkpointsLock.RUnlock()
		return [32]byte{}, err
	}
	justifiedIndex, ok := s.nodesIndices[s.justifiedCheckpoint.Root]
	if !ok {
		s.checkpointsLock.RUnlock()
		return [32]byte{}, errUnknownJustifiedRoot
	}
	s.checkpointsLock.RUnlock()
	bestIndex := s.nodes[justifiedIndex].bestDescendant
	if bestIndex == NonExistentNode {
		bestIndex = justifiedIndex
	}
	bestNode := s.nodes[bestIndex]
	if !s.viableForHead(bestNode) {
		s.allTipsAreInvalid = true
		return [32]byte{}, errors.New("head is not eligible")
	}
	s.allTipsAreInvalid = false
	s.lastHeadRoot = bestNode.root
	return bestNode.root, nil
}

// UpdateJustifiedCheckpoint sets the justified checkpoint to the given one.
func (f *ForkChoice) UpdateJustifiedCheckpoint(jc *Checkpoint) error {
	f.store.checkpointsLock.Lock()
	defer f.store.checkpointsLock.Unlock()
	f.store.prevJustifiedCheckpoint = f.store.justifiedCheckpoint
	f.store.justifiedCheckpoint = jc
	return nil
}

// pausingCtx parks the first Err() call so the test can queue the writer.
type pausingCtx struct {
	context.Context
	once    sync.Once
	reached chan struct{}
	resume  chan struct{}
}

func (c *pausingCtx) Err() error {
	c.once.Do(func() {
		close(c.reached)
		<-c.resume
	})
	return nil
}

func newForkChoice() *ForkChoice {
	genesis := &Node{root: [32]byte{0}, parent: NonExistentNode, bestChild: NonExistentNode, bestDescendant: NonExistentNode}
	block1 := &Node{slot: 1, root: [32]byte{1}, parent: 0, bestChild: NonExistentNode, bestDescendant: NonExistentNode}
	s := &Store{
		nodes:               []*Node{genesis, block1},
		nodesIndices:        map[[32]byte]uint64{{0}: 0, {1}: 1},
		justifiedCheckpoint: &Checkpoint{},
		finalizedCheckpoint: &Checkpoint{},
	}
	return &ForkChoice{store: s}
}

func TestB111prysmviableheadFixed(t *testing.T) {
	f := newForkChoice()
	ctx := &pausingCtx{Context: context.Background(), reached: make(chan struct{}), resume: make(chan struct{})}
	done := make(chan struct{}, 2)

	// Block processing recomputes the head.
	go func() {
		_, _ = f.Head(ctx, []uint64{32, 32})
		done <- struct{}{}
	}()
	<-ctx.reached // head holds checkpointsLock for reading

	// On a new slot the blockchain service updates the justified checkpoint.
	go func() {
		_ = f.UpdateJustifiedCheckpoint(&Checkpoint{Epoch: 0, Root: [32]byte{0}})
		done <- struct{}{}
	}()
	time.Sleep(100 * time.Millisecond) // writer queued on checkpointsLock
	close(ctx.resume)

	<-done
	<-done
}
