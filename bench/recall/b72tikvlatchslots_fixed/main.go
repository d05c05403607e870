// Command b72tikvlatchslots models the local latch scheduler of the TiKV Go
// client (tikv/client-go internal/latch, formerly tidb store/tikv/latch): a
// fixed array of latch slots indexed by a hash of the key, a Lock describing
// the slots a transaction needs, and a commit path that prewrites the keys of
// each slot once its latch is held.
//
// Modelled on tidb / tikv client-go, no specific upstream bug. Upstream the
// required slots are derived from sorted keys so every transaction visits
// latches in one global order. Here genSlotIDs keeps the order in which the
// transaction touched its keys. A transaction that writes a row and then its
// index entry and one that writes the same index entry and then the row take
// the two slot mutexes in opposite orders; each holds its first slot through
// the prewrite RPC and then waits for the other's slot.
//
// The fixed twin sorts the slot IDs in genSlotIDs, so both transactions take
// the lower slot first.
package main

import (
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"time"
)

type latch struct {
	mu          sync.Mutex
	maxCommitTS uint64
}

type Latches struct {
	slots []latch
}

func NewLatches(size int) *Latches {
	powerOfTwo := 1
	for powerOfTwo < size {
		powerOfTwo <<= 1
	}
	return &Latches{slots: make([]latch, powerOfTwo)}
}

func (latches *Latches) slotID(key []byte) int {
	h := fnv.New32a()
	h.Write(key)
	return int(h.Sum32()) & (len(latches.slots) - 1)
}

type Lock struct {
	keys          [][]byte
	requiredSlots []int
	acquiredCount int
	startTS       uint64
	commitTS      uint64
	isStale       bool
}

func (latches *Latches) genSlotIDs(keys [][]byte) []int {
	seen := map[int]bool{}
	slots := make([]int, 0, len(keys))
	for _, key := range keys {
		id := latches.slotID(key)
		if !seen[id] {
			seen[id] = true
			slots = append(slots, id)
		}
	}
	sort.Ints(slots)
	return slots
}

func (latches *Latches) genLock(startTS uint64, keys [][]byte) *Lock {
	return &Lock{keys: keys, requiredSlots: latches.genSlotIDs(keys), startTS: startTS}
}

func (latches *Latches) acquireNext(lock *Lock) int {
	slotID := lock.requiredSlots[lock.acquiredCount]
	l := &latches.slots[slotID]
	l.mu.Lock()
	if l.maxCommitTS > lock.startTS {
		lock.isStale = true
	}
	lock.acquiredCount++
	return slotID
}

func (latches *Latches) release(lock *Lock) {
	for i := lock.acquiredCount - 1; i >= 0; i-- {
		l := &latches.slots[lock.requiredSlots[i]]
		if lock.commitTS > l.maxCommitTS {
			l.maxCommitTS = lock.commitTS
		}
		l.mu.Unlock()
	}
	lock.acquiredCount = 0
}

type oracle struct {
	mu sync.Mutex
	ts uint64
}

func (o *oracle) GetTimestamp() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ts++
	return o.ts
}

type KVTxn struct {
	startTS   uint64
	mutations [][2]string
}

func (txn *KVTxn) Set(k, v string) { txn.mutations = append(txn.mutations, [2]string{k, v}) }

func (txn *KVTxn) keys() [][]byte {
	out := make([][]byte, len(txn.mutations))
	for i, m := range txn.mutations {
		out[i] = []byte(m[0])
	}
	return out
}

type KVStore struct {
	latches *Latches
	oracle  *oracle
	dataMu  sync.Mutex
	data    map[string]string
}

func (s *KVStore) Begin() *KVTxn { return &KVTxn{startTS: s.oracle.GetTimestamp()} }

func (s *KVStore) prewriteSlot(txn *KVTxn, slotID int) int {
	n := 0
	for _, m := range txn.mutations {
		if s.latches.slotID([]byte(m[0])) == slotID {
			n++
		}
	}
	time.Sleep(50 * time.Millisecond)
	return n
}

func (s *KVStore) Commit(txn *KVTxn) error {
	lock := s.latches.genLock(txn.startTS, txn.keys())
	defer s.latches.release(lock)
	for lock.acquiredCount < len(lock.requiredSlots) {
		slotID := s.latches.acquireNext(lock)
		s.prewriteSlot(txn, slotID)
	}
	if lock.isStale {
		return fmt.Errorf("txn %d: write conflict", txn.startTS)
	}
	lock.commitTS = s.oracle.GetTimestamp()
	s.dataMu.Lock()
	for _, m := range txn.mutations {
		s.data[m[0]] = m[1]
	}
	s.dataMu.Unlock()
	return nil
}

func main() {
	store := &KVStore{latches: NewLatches(256), oracle: &oracle{}, data: map[string]string{}}
	row, idx := "t_108_r_1", "t_108_i_2_alice"

	t1 := store.Begin()
	t1.Set(row, "alice,30")
	t1.Set(idx, "1")
	t2 := store.Begin()
	t2.Set(idx, "1")
	t2.Set(row, "alice,31")

	done := make(chan error, 1)
	go func() {
		time.Sleep(10 * time.Millisecond)
		done <- store.Commit(t2)
	}()
	err1 := store.Commit(t1)
	err2 := <-done
	fmt.Println("slots", store.latches.slotID([]byte(row)), store.latches.slotID([]byte(idx)), "t1:", err1, "t2:", err2)
}
