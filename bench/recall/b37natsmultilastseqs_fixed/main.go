// Project: nats-server v2.11 (server/memstore.go, server/stream.go; JetStream in-memory stream store)
// Issue: nats-io/nats-server#6899 "Fix potential deadlock in `MultiLastSeqs`"
//
// FIXED TWIN (PR #6899): MultiLastSeqs read-locks ms.mu (line 110) and, on the
// short-circuit path, calls allLastSeqsLocked (line 119) instead of the exported
// AllLastSeqs, which would read-lock again (line 100). The publisher's StoreMsg
// (line 56) waits for the single read lock to go and then stores.
package main

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

type StreamConfig struct {
	Name     string
	Subjects []string
}

type StreamState struct {
	Msgs     uint64
	FirstSeq uint64
	LastSeq  uint64
}

type StoreMsg struct {
	subj string
	msg  []byte
	seq  uint64
	ts   int64
}

// SimpleState is the per-subject state kept in ms.fss.
type SimpleState struct {
	Msgs  uint64
	First uint64
	Last  uint64
}

type memStore struct {
	mu    sync.RWMutex
	cfg   StreamConfig
	state StreamState
	msgs  map[uint64]*StoreMsg
	fss   map[string]*SimpleState
}

func newMemStore(cfg StreamConfig) *memStore {
	return &memStore{cfg: cfg, msgs: make(map[uint64]*StoreMsg), fss: make(map[string]*SimpleState)}
}

// StoreMsg stores a message.
func (ms *memStore) StoreMsg(subj string, msg []byte) (uint64, int64, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	seq, ts := ms.state.LastSeq+1, time.Now().UnixNano()
	ms.msgs[seq] = &StoreMsg{subj: subj, msg: msg, seq: seq, ts: ts}
	if ms.state.FirstSeq == 0 {
		ms.state.FirstSeq = seq
	}
	ms.state.LastSeq = seq
	ms.state.Msgs++
	if ss := ms.fss[subj]; ss != nil {
		ss.Msgs++
		ss.Last = seq
	} else {
		ms.fss[subj] = &SimpleState{Msgs: 1, First: seq, Last: seq}
	}
	return seq, ts, nil
}

// filterIsAll returns whether the filters cover every subject of the stream.
// Lock should be held.
func (ms *memStore) filterIsAll(filters []string) bool {
	if len(filters) != len(ms.cfg.Subjects) {
		return false
	}
	for i, f := range filters {
		if f != ms.cfg.Subjects[i] {
			return false
		}
	}
	return true
}

// allLastSeqsLocked collects the last sequence of every subject. Lock should be held.
func (ms *memStore) allLastSeqsLocked() []uint64 {
	seqs := make([]uint64, 0, len(ms.fss))
	for _, ss := range ms.fss {
		seqs = append(seqs, ss.Last)
	}
	slices.Sort(seqs)
	return seqs
}

// AllLastSeqs will return a sorted list of last sequences for all subjects.
func (ms *memStore) AllLastSeqs() ([]uint64, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	if len(ms.msgs) == 0 {
		return nil, nil
	}
	return ms.allLastSeqsLocked(), nil
}

// MultiLastSeqs will return a sorted list of sequences that match all subjects presented in filters.
func (ms *memStore) MultiLastSeqs(filters []string, maxSeq uint64, maxAllowed int) ([]uint64, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()

	if len(ms.msgs) == 0 {
		return nil, nil
	}
	// See if we can short circuit if we think they are asking for all last sequences and have no maxSeq or maxAllowed set.
	if maxSeq == 0 && maxAllowed <= 0 && ms.filterIsAll(filters) {
		time.Sleep(30 * time.Millisecond) // scheduling window
		return ms.allLastSeqsLocked(), nil
	}

	// Implied last sequence.
	if maxSeq == 0 {
		maxSeq = ms.state.LastSeq
	}
	var seqs []uint64
	for subj, ss := range ms.fss {
		for _, f := range filters {
			if f == subj && ss.Last <= maxSeq {
				seqs = append(seqs, ss.Last)
			}
		}
		if maxAllowed > 0 && len(seqs) > maxAllowed {
			return nil, fmt.Errorf("too many subjects")
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

func main() {
	ms := newMemStore(StreamConfig{Name: "ORDERS", Subjects: []string{"orders.new", "orders.paid"}})
	ms.StoreMsg("orders.new", []byte("o1"))
	ms.StoreMsg("orders.paid", []byte("o1"))

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		ms.StoreMsg("orders.new", []byte("o2"))
	}()

	// $JS.API.DIRECT.GET.ORDERS with multi_last: ["orders.new", "orders.paid"].
	seqs, err := ms.MultiLastSeqs([]string{"orders.new", "orders.paid"}, 0, 0)
	wg.Wait()
	fmt.Println("last sequences:", seqs, err)
}
