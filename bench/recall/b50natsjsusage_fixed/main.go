// Project: nats-io/nats-server v2.8.x (JetStream), April/May 2022.
// Files: server/stream.go (stream.processJetStreamMsg, storeUpdates, numConsumers),
// server/memstore.go (memStore.StoreMsg, RegisterStorageUpdates), server/jetstream.go
// (jsAccount.updateUsage, jetStream.isClustered, Account.JetStreamUsage).
// Fixed by PR nats-io/nats-server#3092 "[FIXED] JetStream: possible lock inversion".
//
// A stream registers storeUpdates with its store through RegisterStorageUpdates; the store calls
// that func value after each StoreMsg. processJetStreamMsg stores inbound messages while holding
// the stream lock (mset.mu), so storeUpdates -> jsAccount.updateUsage ran under mset.mu, and
// updateUsage took the jetStream lock (isClustered) and then the jsAccount lock (jsa.mu) to charge
// the bytes. The lock order elsewhere is jsAccount -> stream: Account.JetStreamUsage (the $JS.API
// INFO / monitoring path) read-locks js.mu and jsa.mu and asks every stream of the account for its
// consumer count, and numConsumers read-locks mset.mu. A publish and a usage request on the same
// account therefore take mset.mu -> jsa.mu and jsa.mu -> mset.mu and deadlock. The fix gives the
// usage counters their own usageMu, so updateUsage no longer takes jsa.mu, and drops the jetStream
// lock from that path (js.clustered never changes after start).
//
// This is the fixed version: updateUsage only takes the dedicated usageMu.
package main

import (
	"fmt"
	"sync"
	"time"
)

type StorageUpdateHandler func(msgs, bytes int64, seq uint64, subj string)

type StreamStore interface {
	StoreMsg(subject string, hdr, msg []byte) (uint64, int64, error)
	RegisterStorageUpdates(StorageUpdateHandler)
}

type memStore struct {
	mu      sync.RWMutex
	lastSeq uint64
	msgs    map[uint64][]byte
	scb     StorageUpdateHandler
}

func (ms *memStore) RegisterStorageUpdates(cb StorageUpdateHandler) {
	ms.mu.Lock()
	ms.scb = cb
	ms.mu.Unlock()
}

func (ms *memStore) StoreMsg(subj string, hdr, msg []byte) (uint64, int64, error) {
	ms.mu.Lock()
	ms.lastSeq++
	seq, ts := ms.lastSeq, time.Now().UnixNano()
	ms.msgs[seq] = append(append([]byte{}, hdr...), msg...)
	cb := ms.scb
	ms.mu.Unlock()
	if cb != nil {
		cb(1, int64(len(subj)+len(hdr)+len(msg)+16), seq, subj)
	}
	return seq, ts, nil
}

type jetStream struct {
	mu        sync.RWMutex
	clustered bool
}

func (js *jetStream) isClustered() bool {
	js.mu.RLock()
	defer js.mu.RUnlock()
	return js.clustered
}

type jsAccount struct {
	mu      sync.RWMutex
	js      *jetStream
	streams map[string]*stream

	usageMu    sync.RWMutex
	memUsed    int64
	storeTotal int64
}

func (jsa *jsAccount) updateUsage(delta int64) {
	// Ok to check jsa.js.clustered w/o lock: it is immutable.
	var isClustered bool
	if js := jsa.js; js != nil {
		isClustered = js.clustered
	}
	jsa.usageMu.Lock()
	defer jsa.usageMu.Unlock()
	jsa.memUsed += delta
	if !isClustered {
		jsa.storeTotal += delta
	}
}

type stream struct {
	mu        sync.RWMutex
	name      string
	jsa       *jsAccount
	store     StreamStore
	consumers map[string]struct{}
}

func (mset *stream) storeUpdates(md, bd int64, seq uint64, subj string) {
	if mset.jsa != nil {
		mset.jsa.updateUsage(bd)
	}
}

func (mset *stream) processJetStreamMsg(subject string, hdr, msg []byte) error {
	mset.mu.Lock()
	defer mset.mu.Unlock()
	_, _, err := mset.store.StoreMsg(subject, hdr, msg)
	return err
}

func (mset *stream) numConsumers() int {
	mset.mu.RLock()
	defer mset.mu.RUnlock()
	return len(mset.consumers)
}

type Account struct {
	mu   sync.RWMutex
	Name string
	js   *jsAccount
}

type JetStreamAccountStats struct {
	Memory    int64
	Streams   int
	Consumers int
}

func (a *Account) JetStreamUsage() JetStreamAccountStats {
	a.mu.RLock()
	jsa := a.js
	a.mu.RUnlock()
	var stats JetStreamAccountStats
	if jsa == nil {
		return stats
	}
	js := jsa.js
	js.mu.RLock()
	defer js.mu.RUnlock()
	jsa.mu.RLock()
	defer jsa.mu.RUnlock()
	jsa.usageMu.RLock()
	stats.Memory = jsa.memUsed
	jsa.usageMu.RUnlock()
	// Tier and limit bookkeeping of the account (reservations per tier in 2.8).
	time.Sleep(100 * time.Millisecond)
	stats.Streams = len(jsa.streams)
	for _, mset := range jsa.streams {
		stats.Consumers += mset.numConsumers()
	}
	return stats
}

func main() {
	js := &jetStream{}
	jsa := &jsAccount{js: js, streams: map[string]*stream{}}
	acc := &Account{Name: "ORDERS_ACC", js: jsa}
	ms := &memStore{msgs: map[uint64][]byte{}}
	mset := &stream{name: "ORDERS", jsa: jsa, store: ms, consumers: map[string]struct{}{"dispatcher": {}}}
	ms.RegisterStorageUpdates(mset.storeUpdates)
	jsa.streams[mset.name] = mset

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // $JS.API.INFO for the account
		defer wg.Done()
		fmt.Printf("usage: %+v\n", acc.JetStreamUsage())
	}()
	go func() { // a client publishes to ORDERS.new
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		if err := mset.processJetStreamMsg("ORDERS.new", nil, []byte(`{"id":1}`)); err != nil {
			fmt.Println(err)
		}
	}()
	wg.Wait()
	fmt.Println("done")
}
