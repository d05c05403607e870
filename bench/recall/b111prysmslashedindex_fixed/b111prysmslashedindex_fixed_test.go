// Project: prysmaticlabs/prysm (beacon-chain/forkchoice/doubly-linked-tree/forkchoice.go ForkChoice.InsertSlashedIndex and ForkChoice.Head, updateBalances), v2.1.x, August 2022 (PR #11269 "DoublyLinkedTree double locks", whose lock audit lists "Head: votes --> nodes" against "InsertSlashedIndex: nodes --> votes"; the same change was made in protoarray by PR #11271).
// Bug: InsertSlashedIndex, called when the slasher or a block reports an attester slashing, write-locks store.nodesLock (deferred unlock), marks the index slashed and only then read-locks votesLock to subtract the validator's last vote from its node. Head takes votesLock for writing first and then nodesLock to update balances and weights. A slashing processed while block processing recomputes the head deadlocks AB-BA on votesLock and nodesLock, freezing fork choice. The fix takes votesLock.RLock before nodesLock in InsertSlashedIndex.
package b111prysmslashedindexfixed

import (
	"context"
	"sync"
	"testing"
	"time"
)

type ValidatorIndex uint64

type Vote struct {
	currentRoot, nextRoot [32]byte
	nextEpoch             uint64
}

type Node struct {
	slot           uint64
	root           [32]byte
	parent         *Node
	children       []*Node
	balance        uint64
	weight         uint64
	bestDescendant *Node
}

type Store struct {
	nodesLock      sync.RWMutex
	nodeByRoot     map[[32]byte]*Node
	treeRootNode   *Node
	headNode       *Node
	slashedIndices map[ValidatorIndex]bool
}

type ForkChoice struct {
	store     *Store
	votesLock sync.RWMutex
	votes     []Vote
	balances  []uint64
}

// counter stands for the prometheus counters of the forkchoice package.
type counter interface{ Inc() }
type noopCounter struct{}

func (noopCounter) Inc() {}

var calledHeadCount counter = noopCounter{}

// updateBalances updates the balances that directly voted for each block.
func (f *ForkChoice) updateBalances(newBalances []uint64) {
	for index, vote := range f.votes {
		if f.store.slashedIndices[ValidatorIndex(index)] {
			continue
		}
		if n, ok := f.store.nodeByRoot[vote.nextRoot]; ok && index < len(newBalances) {
			n.balance += newBalances[index]
		}
		if n, ok := f.store.nodeByRoot[vote.currentRoot]; ok && index < len(f.balances) && n.balance >= f.balances[index] {
			n.balance -= f.balances[index]
		}
		f.votes[index].currentRoot = vote.nextRoot
	}
	f.balances = newBalances
}

func (n *Node) applyWeightChanges(ctx context.Context) error {
	childrenWeight := uint64(0)
	for _, child := range n.children {
		if err := child.applyWeightChanges(ctx); err != nil {
			return err
		}
		childrenWeight += child.weight
	}
	n.weight = n.balance + childrenWeight
	return ctx.Err()
}

func (n *Node) updateBestDescendant() {
	n.bestDescendant = nil
	var best *Node
	for _, child := range n.children {
		child.updateBestDescendant()
		if best == nil || child.weight > best.weight {
			best = child
		}
	}
	if best != nil {
		n.bestDescendant = best
		if best.bestDescendant != nil {
			n.bestDescendant = best.bestDescendant
		}
	}
}

// Head returns the head root from fork choice store.
func (f *ForkChoice) Head(ctx context.Context, justifiedStateBalances []uint64) ([32]byte, error) {
	f.votesLock.Lock()
	defer f.votesLock.Unlock()

	calledHeadCount.Inc()

	f.store.nodesLock.Lock()
	defer f.store.nodesLock.Unlock()

	f.updateBalances(justifiedStateBalances)
	if err := f.store.treeRootNode.applyWeightChanges(ctx); err != nil {
		return [32]byte{}, err
	}
	f.store.treeRootNode.updateBestDescendant()
	f.store.headNode = f.store.treeRootNode.bestDescendant
	return f.store.headNode.root, nil
}

// InsertSlashedIndex adds the given slashed validator index to the
// store-tracked list. Votes from these validators are not accounted for
// in forkchoice.
func (f *ForkChoice) InsertSlashedIndex(_ context.Context, index ValidatorIndex) {
	f.votesLock.RLock()
	defer f.votesLock.RUnlock()

	f.store.nodesLock.Lock()
	defer f.store.nodesLock.Unlock()
	// return early if the index was already included:
	if f.store.slashedIndices[index] {
		return
	}
	f.store.slashedIndices[index] = true

	// Subtract last vote from this equivocating validator
	if index >= ValidatorIndex(len(f.balances)) || index >= ValidatorIndex(len(f.votes)) {
		return
	}
	node, ok := f.store.nodeByRoot[f.votes[index].currentRoot]
	if !ok || node == nil {
		return
	}
	if node.balance < f.balances[index] {
		node.balance = 0
	} else {
		node.balance -= f.balances[index]
	}
}

// gateCounter parks the first Inc() so the test can interleave a slashing.
type gateCounter struct {
	once            sync.Once
	reached, resume chan struct{}
}

func (g *gateCounter) Inc() { g.once.Do(func() { close(g.reached); <-g.resume }) }

func TestB111prysmslashedindexFixed(t *testing.T) {
	genesis := &Node{root: [32]byte{0}}
	block1 := &Node{slot: 1, root: [32]byte{1}, parent: genesis}
	genesis.children = []*Node{block1}
	f := &ForkChoice{
		store: &Store{
			nodeByRoot:     map[[32]byte]*Node{{0}: genesis, {1}: block1},
			treeRootNode:   genesis,
			slashedIndices: map[ValidatorIndex]bool{},
		},
		votes:    []Vote{{currentRoot: [32]byte{1}, nextRoot: [32]byte{1}}, {nextRoot: [32]byte{1}}},
		balances: []uint64{32, 32},
	}
	gate := &gateCounter{reached: make(chan struct{}), resume: make(chan struct{})}
	calledHeadCount = gate
	done := make(chan struct{}, 2)

	// Blockchain service: updateHead after a block was processed.
	go func() { _, _ = f.Head(context.Background(), []uint64{32, 32}); done <- struct{}{} }()
	<-gate.reached // Head holds votesLock

	// Attester slashing from the slasher / an included block.
	go func() { f.InsertSlashedIndex(context.Background(), 0); done <- struct{}{} }()
	time.Sleep(100 * time.Millisecond) // InsertSlashedIndex holds nodesLock, waits for votesLock
	close(gate.resume)

	<-done
	<-done
}
