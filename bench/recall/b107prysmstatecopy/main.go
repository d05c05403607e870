// Project: prysmaticlabs/prysm (beacon-chain/state/state_trie.go BeaconState.Copy, beacon-chain/state/getters.go, beacon-chain/state/setters.go), v1.0.0-alpha.x, mid 2020 (issue #6529 "Deadlock when sending a large amount of HTTP requests", fixed by PR #6326 "Update beacon state locks", first behind --new-beacon-state-locks, default since PR #6922).
// Bug: BeaconState.Copy read-locks b.lock for the whole copy and fills the small fields through the exported getters (Fork, LatestBlockHeader, Eth1Data, the checkpoints, GenesisValidatorRoot), each of which read-locks b.lock again. When a setter such as SetSlot queues for the write lock between the outer and a nested RLock, the nested RLock waits for the writer and the writer waits for Copy, so API handlers copying a state and the state transition writing it deadlock. The fix splits each getter into a locking exported getter and an unexported lock-free one, and Copy uses the unexported ones.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Fork struct {
	PreviousVersion, CurrentVersion []byte
	Epoch                           uint64
}

type BeaconBlockHeader struct {
	Slot, ProposerIndex             uint64
	ParentRoot, StateRoot, BodyRoot []byte
}

type Eth1Data struct {
	DepositRoot  []byte
	DepositCount uint64
	BlockHash    []byte
}

type Checkpoint struct {
	Epoch uint64
	Root  []byte
}

// pbBeaconState mirrors the pbp2p.BeaconState protobuf.
type pbBeaconState struct {
	GenesisTime                 uint64
	GenesisValidatorsRoot       []byte
	Slot                        uint64
	Fork                        *Fork
	LatestBlockHeader           *BeaconBlockHeader
	BlockRoots, StateRoots      [][]byte
	Eth1Data                    *Eth1Data
	Validators                  [][]byte
	Balances                    []uint64
	RandaoMixes                 [][]byte
	JustificationBits           []byte
	PreviousJustifiedCheckpoint *Checkpoint
	CurrentJustifiedCheckpoint  *Checkpoint
	FinalizedCheckpoint         *Checkpoint
}

type fieldIndex int

const (
	slot fieldIndex = iota
	blockRoots
	stateRoots
	validators
	balances
	randaoMixes
)

type reference struct {
	refs uint
	lock sync.RWMutex
}

func (r *reference) AddRef() {
	r.lock.Lock()
	r.refs++
	r.lock.Unlock()
}

type BeaconState struct {
	state                 *pbBeaconState
	lock                  sync.RWMutex
	dirtyFields           map[fieldIndex]interface{}
	sharedFieldReferences map[fieldIndex]*reference
}

func (b *BeaconState) HasInnerState() bool { return b != nil && b.state != nil }

func copyBytes(in []byte) []byte { return append([]byte(nil), in...) }

func copyCheckpoint(cp *Checkpoint) *Checkpoint {
	return &Checkpoint{Epoch: cp.Epoch, Root: copyBytes(cp.Root)}
}

// --- getters.go ---

func (b *BeaconState) Slot() uint64 {
	b.lock.RLock()
	defer b.lock.RUnlock()
	return b.state.Slot
}

func (b *BeaconState) Fork() *Fork {
	if !b.HasInnerState() || b.state.Fork == nil {
		return nil
	}
	b.lock.RLock()
	defer b.lock.RUnlock()
	f := b.state.Fork
	return &Fork{PreviousVersion: copyBytes(f.PreviousVersion), CurrentVersion: copyBytes(f.CurrentVersion), Epoch: f.Epoch}
}

func (b *BeaconState) LatestBlockHeader() *BeaconBlockHeader {
	b.lock.RLock()
	defer b.lock.RUnlock()
	h := *b.state.LatestBlockHeader
	h.ParentRoot, h.StateRoot, h.BodyRoot = copyBytes(h.ParentRoot), copyBytes(h.StateRoot), copyBytes(h.BodyRoot)
	return &h
}

func (b *BeaconState) Eth1Data() *Eth1Data {
	b.lock.RLock()
	defer b.lock.RUnlock()
	d := *b.state.Eth1Data
	return &d
}

func (b *BeaconState) JustificationBits() []byte {
	b.lock.RLock()
	defer b.lock.RUnlock()
	return copyBytes(b.state.JustificationBits)
}

func (b *BeaconState) PreviousJustifiedCheckpoint() *Checkpoint {
	b.lock.RLock()
	defer b.lock.RUnlock()
	return copyCheckpoint(b.state.PreviousJustifiedCheckpoint)
}

func (b *BeaconState) CurrentJustifiedCheckpoint() *Checkpoint {
	b.lock.RLock()
	defer b.lock.RUnlock()
	return copyCheckpoint(b.state.CurrentJustifiedCheckpoint)
}

func (b *BeaconState) FinalizedCheckpoint() *Checkpoint {
	b.lock.RLock()
	defer b.lock.RUnlock()
	return copyCheckpoint(b.state.FinalizedCheckpoint)
}

func (b *BeaconState) GenesisValidatorRoot() []byte {
	b.lock.RLock()
	defer b.lock.RUnlock()
	return copyBytes(b.state.GenesisValidatorsRoot)
}

// --- setters.go ---

func (b *BeaconState) markFieldAsDirty(field fieldIndex) { b.dirtyFields[field] = true }

func (b *BeaconState) SetSlot(val uint64) error {
	b.lock.Lock()
	defer b.lock.Unlock()
	b.state.Slot = val
	b.markFieldAsDirty(slot)
	return nil
}

// --- state_trie.go ---

// copyLargeFields stands in for the time Copy spends on mainnet-sized fields.
var copyLargeFields = func() { time.Sleep(100 * time.Millisecond) }

// Copy returns a deep copy of the beacon state.
func (b *BeaconState) Copy() *BeaconState {
	if !b.HasInnerState() {
		return nil
	}
	b.lock.RLock()
	defer b.lock.RUnlock()
	copyLargeFields()

	dst := &BeaconState{
		state: &pbBeaconState{
			// Primitive types, safe to copy.
			GenesisTime: b.state.GenesisTime,
			Slot:        b.state.Slot,
			// Large arrays, shared through sharedFieldReferences.
			BlockRoots:  b.state.BlockRoots,
			StateRoots:  b.state.StateRoots,
			Validators:  b.state.Validators,
			Balances:    b.state.Balances,
			RandaoMixes: b.state.RandaoMixes,
			// Everything else, too small to be concerned about, constant size.
			Fork:                        b.Fork(),
			LatestBlockHeader:           b.LatestBlockHeader(),
			Eth1Data:                    b.Eth1Data(),
			JustificationBits:           b.JustificationBits(),
			PreviousJustifiedCheckpoint: b.PreviousJustifiedCheckpoint(),
			CurrentJustifiedCheckpoint:  b.CurrentJustifiedCheckpoint(),
			FinalizedCheckpoint:         b.FinalizedCheckpoint(),
			GenesisValidatorsRoot:       b.GenesisValidatorRoot(),
		},
		dirtyFields:           make(map[fieldIndex]interface{}),
		sharedFieldReferences: make(map[fieldIndex]*reference),
	}
	for field, ref := range b.sharedFieldReferences {
		ref.AddRef()
		dst.sharedFieldReferences[field] = ref
	}
	return dst
}

func main() {
	cp := &Checkpoint{Epoch: 10, Root: make([]byte, 32)}
	st := &BeaconState{
		state: &pbBeaconState{
			Slot:                        320,
			Fork:                        &Fork{PreviousVersion: []byte{0, 0, 0, 0}, CurrentVersion: []byte{0, 0, 0, 1}},
			LatestBlockHeader:           &BeaconBlockHeader{Slot: 319},
			Eth1Data:                    &Eth1Data{DepositCount: 21063},
			JustificationBits:           []byte{0x0f},
			PreviousJustifiedCheckpoint: cp,
			CurrentJustifiedCheckpoint:  cp,
			FinalizedCheckpoint:         cp,
		},
		dirtyFields:           make(map[fieldIndex]interface{}),
		sharedFieldReferences: map[fieldIndex]*reference{validators: {refs: 1}, balances: {refs: 1}},
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // gRPC gateway handler (e.g. ValidatorStatus) copying the cached state
		defer wg.Done()
		c := st.Copy()
		fmt.Println("copied state at slot", c.state.Slot)
	}()
	go func() { // initial sync advancing the same cached state (ProcessSlots)
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		_ = st.SetSlot(st.Slot() + 1)
		fmt.Println("advanced state to slot", st.Slot())
	}()
	wg.Wait()
}
