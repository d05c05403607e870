// Shape of nats-server JetStream usage accounting for an account's streams.
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type StorageType int

const MemoryStorage StorageType = 1

type StorageUpdateHandler func(msgs, bytes int64, seq uint64, subj string)

type StreamState struct {
	Msgs  uint64
	Bytes uint64
}

type StreamStore interface {
	StoreMsg(subj string, msg []byte) (uint64, error)
	RegisterStorageUpdates(StorageUpdateHandler)
	State() StreamState
}

type memStore struct {
	mu      sync.RWMutex
	msgs    map[uint64][]byte
	first   uint64
	last    uint64
	bytes   uint64
	maxMsgs int
	scb     StorageUpdateHandler
}

func (ms *memStore) RegisterStorageUpdates(cb StorageUpdateHandler) {
	ms.mu.Lock()
	ms.scb = cb
	ms.mu.Unlock()
}

func (ms *memStore) StoreMsg(subj string, msg []byte) (uint64, error) {
	ms.mu.Lock()
	ms.last++
	seq := ms.last
	ms.msgs[seq] = msg
	ms.bytes += uint64(len(msg))
	cb := ms.scb
	ms.enforceMsgLimit()
	ms.mu.Unlock()
	if cb != nil {
		cb(1, int64(len(msg)), seq, subj)
	}
	return seq, nil
}

// enforceMsgLimit is called with ms.mu held; the callback runs unlocked.
func (ms *memStore) enforceMsgLimit() {
	for len(ms.msgs) > ms.maxMsgs {
		ms.first++
		sz := int64(len(ms.msgs[ms.first]))
		delete(ms.msgs, ms.first)
		ms.bytes -= uint64(sz)
		if ms.scb != nil {
			ms.mu.Unlock()
			ms.scb(-1, -sz, ms.first, "")
			ms.mu.Lock()
		}
	}
}

func (ms *memStore) State() StreamState {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return StreamState{Msgs: uint64(len(ms.msgs)), Bytes: ms.bytes}
}

type stream struct {
	mu    sync.RWMutex
	name  string
	jsa   *jsAccount
	tier  string
	stype StorageType
	store StreamStore
}

func (mset *stream) storeUpdates(md, bd int64, seq uint64, subj string) {
	mset.jsa.updateUsage(mset.tier, mset.stype, bd)
}

// processJetStreamMsg holds the stream lock while storing.
func (mset *stream) processJetStreamMsg(subj string, msg []byte) error {
	mset.mu.Lock()
	defer mset.mu.Unlock()
	time.Sleep(10 * time.Millisecond) // dedupe window and header checks
	_, err := mset.store.StoreMsg(subj, msg)
	return err
}

type jsAccount struct {
	mu      sync.RWMutex
	usageMu sync.RWMutex
	streams map[string]*stream
	usage   map[string]int64
}

func (jsa *jsAccount) updateUsage(tierName string, storeType StorageType, delta int64) {
	jsa.usageMu.Lock()
	defer jsa.usageMu.Unlock()
	jsa.usage[tierName] += delta
}

// checkAndSyncUsage runs when a skew between local and remote usage is seen.
func (jsa *jsAccount) checkAndSyncUsage(tierName string, storeType StorageType) {
	jsa.mu.RLock()
	defer jsa.mu.RUnlock()

	jsa.usageMu.Lock()
	defer jsa.usageMu.Unlock()
	names := make([]string, 0, len(jsa.streams))
	for n := range jsa.streams {
		names = append(names, n)
	}
	sort.Strings(names)
	var total int64
	for _, n := range names {
		mset := jsa.streams[n]
		mset.mu.RLock()
		if mset.tier == tierName && mset.stype == storeType && mset.store != nil {
			total += int64(mset.store.State().Bytes)
		}
		mset.mu.RUnlock()
		time.Sleep(15 * time.Millisecond) // per-stream accounting
	}
	jsa.usage[tierName] = total
}

func newStream(jsa *jsAccount, name string, maxMsgs int) *stream {
	mset := &stream{name: name, jsa: jsa, tier: "R1", stype: MemoryStorage,
		store: &memStore{msgs: map[uint64][]byte{}, maxMsgs: maxMsgs}}
	mset.store.RegisterStorageUpdates(mset.storeUpdates)
	jsa.streams[name] = mset
	return mset
}

func main() {
	jsa := &jsAccount{streams: map[string]*stream{}, usage: map[string]int64{}}
	newStream(jsa, "AUDIT", 100)
	orders := newStream(jsa, "ORDERS", 1)
	_ = orders.processJetStreamMsg("orders.new", []byte("order-1"))

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); jsa.checkAndSyncUsage("R1", MemoryStorage) }()
	go func() {
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		_ = orders.processJetStreamMsg("orders.new", []byte("order-2")) // exceeds MaxMsgs: one removal
	}()
	wg.Wait()
	fmt.Println("usage R1:", jsa.usage["R1"])
}
