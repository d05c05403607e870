// Project: prysmaticlabs/prysm (beacon-chain/forkchoice/protoarray/on_tick.go ForkChoice.NewSlot and forkchoice.go ForkChoice.AncestorRoot, ForkChoice.Head, Store.viableForHead; same pattern in updateCheckpoints), v2.1.x, August 2022 (fixed in the lock audit of PRs #11269 "DoublyLinkedTree double locks" and #11271 "Protoarray deadlocks"; which of the two PRs touched NewSlot is approximate).
// Bug: at the start of an epoch NewSlot write-locks checkpointsLock (deferred unlock) and, still holding it, checks that the best justified checkpoint descends from the finalized one through the exported AncestorRoot, which read-locks nodesLock. Head takes votesLock and nodesLock for writing and then, while recomputing best descendants, read-locks checkpointsLock in viableForHead. The slot ticker goroutine and block processing deadlock AB-BA on checkpointsLock and nodesLock. The fix copies the checkpoints under a read lock, calls AncestorRoot without holding checkpointsLock and write-locks it again only to store the new justified checkpoint.
package b111prysmnewslotancestor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

const (
	NonExistentNode = ^uint64(0)
	slotsPerEpoch   = 32
)

type Checkpoint struct {
	Epoch uint64
	Root  [32]byte
}

type Vote struct{ currentRoot, nextRoot [32]byte }

type Node struct {
	slot, parent                   uint64
	root                           [32]byte
	justifiedEpoch, finalizedEpoch uint64
	weight, bestDescendant         uint64
}

type Store struct {
	nodesLock               sync.RWMutex
	nodes                   []*Node
	nodesIndices            map[[32]byte]uint64
	checkpointsLock         sync.RWMutex
	justifiedCheckpoint     *Checkpoint
	bestJustifiedCheckpoint *Checkpoint
	prevJustifiedCheckpoint *Checkpoint
	finalizedCheckpoint     *Checkpoint
	proposerBoostLock       sync.RWMutex
	proposerBoostRoot       [32]byte
}

type ForkChoice struct {
	store     *Store
	votesLock sync.RWMutex
	votes     []Vote
	balances  []uint64
}

func computeDeltas(ctx context.Context, s *Store, votes []Vote) ([]int, error) {
	deltas := make([]int, len(s.nodes))
	for range votes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return deltas, nil
}

// Head computes balance changes, then the best descendants, then the head.
func (f *ForkChoice) Head(ctx context.Context, balances []uint64) ([32]byte, error) {
	f.votesLock.Lock()
	defer f.votesLock.Unlock()
	f.store.nodesLock.Lock()
	defer f.store.nodesLock.Unlock()
	deltas, err := computeDeltas(ctx, f.store, f.votes)
	if err != nil {
		return [32]byte{}, err
	}
	f.balances = balances
	for i := len(f.store.nodes) - 1; i > 0; i-- {
		n := f.store.nodes[i]
		n.weight += uint64(deltas[i])
		if f.store.viableForHead(n) {
			f.store.nodes[n.parent].bestDescendant = uint64(i)
		}
	}
	return f.store.nodes[len(f.store.nodes)-1].root, nil
}

func (s *Store) viableForHead(node *Node) bool {
	s.checkpointsLock.RLock()
	defer s.checkpointsLock.RUnlock()
	return (s.justifiedCheckpoint.Epoch == node.justifiedEpoch || s.justifiedCheckpoint.Epoch == 0) &&
		(s.finalizedCheckpoint.Epoch == node.finalizedEpoch || s.finalizedCheckpoint.Epoch == 0)
}

// AncestorRoot returns the ancestor root of input block root at a given slot.
func (f *ForkChoice) AncestorRoot(ctx context.Context, root [32]byte, slot uint64) ([32]byte, error) {
	f.store.nodesLock.RLock()
	defer f.store.nodesLock.RUnlock()
	i, ok := f.store.nodesIndices[root]
	if !ok {
		return [32]byte{}, errors.New("node does not exist")
	}
	for f.store.nodes[i].slot > slot {
		if ctx.Err() != nil {
			return [32]byte{}, ctx.Err()
		}
		i = f.store.nodes[i].parent
	}
	return f.store.nodes[i].root, nil
}

func (f *ForkChoice) ResetBoostedProposerRoot(_ context.Context) error {
	f.store.proposerBoostLock.Lock()
	f.store.proposerBoostRoot = [32]byte{}
	f.store.proposerBoostLock.Unlock()
	return nil
}

// NewSlot is called at the beginning of every slot.
func (f *ForkChoice) NewSlot(ctx context.Context, slot uint64) error {
	if err := f.ResetBoostedProposerRoot(ctx); err != nil {
		return err
	}
	if slot%slotsPerEpoch != 0 {
		return nil
	}
	// Update store.justified_checkpoint if a better checkpoint on the
	// store.finalized_checkpoint chain.
	f.store.checkpointsLock.Lock()
	defer f.store.checkpointsLock.Unlock()
	bjcp := f.store.bestJustifiedCheckpoint
	jcp := f.store.justifiedCheckpoint
	if bjcp.Epoch > jcp.Epoch {
		finalizedSlot := f.store.finalizedCheckpoint.Epoch * slotsPerEpoch
		r, err := f.AncestorRoot(ctx, bjcp.Root, finalizedSlot)
		if err != nil {
			return err
		}
		if r == f.store.finalizedCheckpoint.Root {
			f.store.prevJustifiedCheckpoint = jcp
			f.store.justifiedCheckpoint = bjcp
		}
	}
	return nil
}

type pausingCtx struct {
	context.Context
	once            sync.Once
	reached, resume chan struct{}
}

func (c *pausingCtx) Err() error {
	c.once.Do(func() { close(c.reached); <-c.resume })
	return nil
}

func TestB111prysmnewslotancestor(t *testing.T) {
	genesis := &Node{root: [32]byte{0}, parent: NonExistentNode, bestDescendant: NonExistentNode}
	b32 := &Node{slot: 32, root: [32]byte{32}, parent: 0, bestDescendant: NonExistentNode}
	f := &ForkChoice{
		store: &Store{
			nodes:                   []*Node{genesis, b32},
			nodesIndices:            map[[32]byte]uint64{{0}: 0, {32}: 1},
			justifiedCheckpoint:     &Checkpoint{},
			bestJustifiedCheckpoint: &Checkpoint{Epoch: 1, Root: [32]byte{32}},
			finalizedCheckpoint:     &Checkpoint{},
		},
		votes: make([]Vote, 4),
	}
	ctx := &pausingCtx{Context: context.Background(), reached: make(chan struct{}), resume: make(chan struct{})}
	done := make(chan struct{}, 2)

	// Block processing: updateHead -> ForkChoice.Head.
	go func() {
		_, _ = f.Head(ctx, []uint64{32, 32, 32, 32})
		done <- struct{}{}
	}()
	<-ctx.reached // Head holds votesLock and nodesLock

	// Slot ticker: NewSlot at the first slot of epoch 2.
	go func() {
		_ = f.NewSlot(context.Background(), 64)
		done <- struct{}{}
	}()
	time.Sleep(100 * time.Millisecond) // NewSlot holds checkpointsLock, waits for nodesLock
	close(ctx.resume)

	<-done
	<-done
}
