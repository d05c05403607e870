// Project: nats-io/nats-server v2.11.x (JetStream).
// Files/functions: server/memstore.go (memStore.MultiLastSeqs, filterIsAll,
// AllLastSeqs, StoreMsg), server/stream.go (stream.getDirectMulti, reached
// from the batched direct-get API with multi_last set).
// Issue/PR: nats-io/nats-server PR #6899 "Fix potential deadlock in
// MultiLastSeqs" (May 2025).
//
// MultiLastSeqs takes the store's read lock for its whole body. It has a
// short cut for the common request "last message of every subject": when no
// max sequence and no result cap were given and the filters cover all of the
// stream's configured subjects (filterIsAll), it returns AllLastSeqs(). But
// AllLastSeqs is the exported entry point and takes ms.mu.RLock() itself. A
// recursive read lock works until a publisher's StoreMsg calls ms.mu.Lock()
// between the two RLock calls: the writer waits for the first reader, and the
// second RLock waits behind the writer, so the direct-get goroutine and every
// publisher on the stream hang. The fix calls the lock-free
// allLastSeqsLocked() from MultiLastSeqs.
package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

var ErrTooManyResults = errors.New("too many matching results for request")

type StreamConfig struct {
	Name     string
	Subjects []string
}

type StreamState struct{ Msgs, FirstSeq, LastSeq uint64 }

type StoreMsg struct {
	subj string
	seq  uint64
	msg  []byte
}

type SimpleState struct{ Msgs, First, Last uint64 }

// StreamStore is the interface the stream talks to.
type StreamStore interface {
	StoreMsg(subj string, hdr, msg []byte) (uint64, int64, error)
	AllLastSeqs() ([]uint64, error)
	MultiLastSeqs(filters []string, maxSeq uint64, maxAllowed int) ([]uint64, error)
}

type memStore struct {
	mu    sync.RWMutex
	cfg   StreamConfig
	state StreamState
	msgs  map[uint64]*StoreMsg
	fss   map[string]*SimpleState
}

func newMemStore(cfg StreamConfig) *memStore {
	return &memStore{cfg: cfg, msgs: map[uint64]*StoreMsg{}, fss: map[string]*SimpleState{}}
}

func (ms *memStore) StoreMsg(subj string, hdr, msg []byte) (uint64, int64, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	seq := ms.state.LastSeq + 1
	ms.msgs[seq] = &StoreMsg{subj: subj, seq: seq, msg: msg}
	ss := ms.fss[subj]
	if ss == nil {
		ss = &SimpleState{First: seq}
		ms.fss[subj] = ss
	}
	ss.Msgs++
	ss.Last = seq
	ms.state.Msgs++
	ms.state.LastSeq = seq
	return seq, 0, nil
}

// AllLastSeqs returns the last sequence of every subject.
func (ms *memStore) AllLastSeqs() ([]uint64, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	if len(ms.msgs) == 0 {
		return nil, nil
	}
	seqs := make([]uint64, 0, len(ms.fss))
	for _, ss := range ms.fss {
		seqs = append(seqs, ss.Last)
	}
	slices.Sort(seqs)
	return seqs, nil
}

// filterIsAll reports whether the filters are exactly the stream's subjects.
// Lock should be held.
func (ms *memStore) filterIsAll(filters []string) bool {
	if len(filters) != len(ms.cfg.Subjects) {
		return false
	}
	// Sort so we can compare.
	slices.Sort(filters)
	for i, subj := range filters {
		if !subjectIsSubsetMatch(ms.cfg.Subjects[i], subj) {
			return false
		}
	}
	return true
}

func (ms *memStore) MultiLastSeqs(filters []string, maxSeq uint64, maxAllowed int) ([]uint64, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()

	if len(ms.msgs) == 0 {
		return nil, nil
	}

	// See if we can short circuit if we think they are asking for all last sequences and have no maxSeq or maxAllowed set.
	if maxSeq == 0 && maxAllowed <= 0 && ms.filterIsAll(filters) {
		time.Sleep(50 * time.Millisecond) // a publisher's StoreMsg arrives here
		return ms.AllLastSeqs()
	}

	// Implied last sequence.
	if maxSeq == 0 {
		maxSeq = ms.state.LastSeq
	}
	var seqs []uint64
	for subj, ss := range ms.fss {
		for _, filter := range filters {
			if subjectIsSubsetMatch(subj, filter) && ss.Last <= maxSeq {
				seqs = append(seqs, ss.Last)
				break
			}
		}
		if maxAllowed > 0 && len(seqs) > maxAllowed {
			return nil, ErrTooManyResults
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// subjectIsSubsetMatch: does subject fall within the (possibly wildcard) test subject.
func subjectIsSubsetMatch(subject, test string) bool {
	st, tt := strings.Split(subject, "."), strings.Split(test, ".")
	for i, t := range tt {
		if t == ">" {
			return true
		}
		if i >= len(st) || (t != "*" && t != st[i]) {
			return false
		}
	}
	return len(st) == len(tt)
}

type stream struct {
	cfg   StreamConfig
	store StreamStore
}

// getDirectMulti serves a batched direct get with MultiLastFor.
func (mset *stream) getDirectMulti(multiLastFor []string, upToSeq uint64) ([]uint64, error) {
	return mset.store.MultiLastSeqs(multiLastFor, upToSeq, 0)
}

func (mset *stream) processJetStreamMsg(subject string, msg []byte) error {
	_, _, err := mset.store.StoreMsg(subject, nil, msg)
	return err
}

func main() {
	cfg := StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}
	mset := &stream{cfg: cfg, store: newMemStore(cfg)}
	for _, s := range []string{"orders.eu", "orders.us", "orders.eu"} {
		_ = mset.processJetStreamMsg(s, []byte("x"))
	}

	done := make(chan struct{})
	go func() {
		seqs, err := mset.getDirectMulti([]string{"orders.>"}, 0)
		fmt.Println("last per subject:", seqs, err)
		done <- struct{}{}
	}()
	time.Sleep(20 * time.Millisecond)
	go func() {
		_ = mset.processJetStreamMsg("orders.asia", []byte("y"))
		done <- struct{}{}
	}()
	<-done
	<-done
}
