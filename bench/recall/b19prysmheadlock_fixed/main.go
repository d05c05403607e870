// Project: prysmaticlabs/prysm (beacon-chain/blockchain/head.go)
// Bug: Service.HeadState took s.headLock.RLock and, while holding it, called
// s.hasHeadState(), which takes s.headLock.RLock again (recursive read lock).
// When saveHead's s.headLock.Lock arrived between the two RLocks, the writer
// waited for the outer reader and the inner RLock waited behind the writer.
// Fix: call the lock-free s.hasHeadStateLocked helper inside HeadState
// (prysm's "remove recursive RLock" cleanups).

package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Slot uint64

type BeaconState struct {
	slot       Slot
	validators []uint64
}

func (st *BeaconState) Copy() *BeaconState {
	time.Sleep(40 * time.Millisecond) // deep copy of a large state
	v := make([]uint64, len(st.validators))
	copy(v, st.validators)
	return &BeaconState{slot: st.slot, validators: v}
}

type head struct {
	slot  Slot
	root  [32]byte
	state *BeaconState
}

type Service struct {
	ctx      context.Context
	headLock sync.RWMutex
	head     *head
	genesis  time.Time
}

func (s *Service) HeadSlot() Slot {
	s.headLock.RLock()
	defer s.headLock.RUnlock()
	if s.head == nil {
		return 0
	}
	return s.head.slot
}

func (s *Service) HeadRoot(ctx context.Context) ([32]byte, error) {
	s.headLock.RLock()
	defer s.headLock.RUnlock()
	if s.head == nil {
		return [32]byte{}, nil
	}
	return s.head.root, nil
}

// HeadState returns a copy of the head state.
func (s *Service) HeadState(ctx context.Context) (*BeaconState, error) {
	s.headLock.RLock()
	defer s.headLock.RUnlock()
	cp := s.head.state.Copy()
	if !s.hasHeadStateLocked() {
		return nil, fmt.Errorf("head state is nil")
	}
	return cp, nil
}

func (s *Service) hasHeadState() bool {
	s.headLock.RLock()
	defer s.headLock.RUnlock()
	return s.hasHeadStateLocked()
}

func (s *Service) hasHeadStateLocked() bool {
	return s.head != nil && s.head.state != nil
}

func (s *Service) setHead(root [32]byte, st *BeaconState) {
	s.headLock.Lock()
	defer s.headLock.Unlock()
	s.head = &head{slot: st.slot, root: root, state: st}
}

func (s *Service) saveHead(ctx context.Context, root [32]byte, st *BeaconState) error {
	if root == [32]byte{} {
		return fmt.Errorf("cannot save zero head root")
	}
	s.setHead(root, st)
	return nil
}

func main() {
	s := &Service{ctx: context.Background(), genesis: time.Now()}
	s.setHead([32]byte{1}, &BeaconState{slot: 31, validators: make([]uint64, 1024)})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // RPC: GetBeaconState
		defer wg.Done()
		st, err := s.HeadState(s.ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("head state slot", st.slot)
	}()
	go func() { // block processing: new head at slot 32
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		if err := s.saveHead(s.ctx, [32]byte{2}, &BeaconState{slot: 32}); err != nil {
			fmt.Println(err)
		}
	}()
	wg.Wait()
	r, _ := s.HeadRoot(s.ctx)
	fmt.Printf("head slot %d root %x\n", s.HeadSlot(), r[:4])
}
