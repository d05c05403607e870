// Project: nats-server JetStream (server/stream.go, server/consumer.go, server/memstore.go)
// Bug: the store calls stream.storeUpdates (registered via RegisterStorageUpdates), which
//   RLocks mset.mu and for each consumer runs decStreamPending -> processAckMsg -> ackMsg,
//   which RLocks mset.mu again; a queued writer (addConsumer) makes the 2nd RLock block forever.
// Upstream fix: walk consumers under a separate consumer-list lock clsMu, not mset.mu (nats-server #2403)

package main

import (
	"fmt"
	"sync"
)

type RetentionPolicy int

const (
	LimitsPolicy RetentionPolicy = iota
	InterestPolicy
)

type StorageUpdateHandler func(msgs, bytes int64, seq uint64, subj string)

type StreamStore interface {
	StoreMsg(subj string, msg []byte) (uint64, error)
	RemoveMsg(seq uint64) (bool, error)
	RegisterStorageUpdates(StorageUpdateHandler)
}

type storedMsg struct {
	subj string
	msg  []byte
}

type memStore struct {
	mu   sync.RWMutex
	msgs map[uint64]*storedMsg
	last uint64
	scb  StorageUpdateHandler
}

func (ms *memStore) RegisterStorageUpdates(cb StorageUpdateHandler) {
	ms.mu.Lock()
	ms.scb = cb
	ms.mu.Unlock()
}

func (ms *memStore) StoreMsg(subj string, msg []byte) (uint64, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.last++
	ms.msgs[ms.last] = &storedMsg{subj: subj, msg: msg}
	return ms.last, nil
}

func (ms *memStore) RemoveMsg(seq uint64) (bool, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	sm, ok := ms.msgs[seq]
	if !ok {
		return false, nil
	}
	delete(ms.msgs, seq)
	if ms.scb != nil {
		// We do not want to hold any locks here.
		ms.mu.Unlock()
		ms.scb(-1, -int64(len(sm.msg)), seq, sm.subj)
		ms.mu.Lock()
	}
	return true, nil
}

type stream struct {
	mu        sync.RWMutex
	retention RetentionPolicy
	store     StreamStore
	consumers map[string]*consumer

	// clsMu protects cList, used from store callbacks where mset.mu may be held.
	clsMu sync.RWMutex
	cList []*consumer
}

type consumer struct {
	mu      sync.RWMutex
	mset    *stream
	pending map[uint64]uint64 // stream seq -> delivery seq
}

func (mset *stream) setupStore() {
	mset.mu.Lock()
	mset.store = &memStore{msgs: make(map[uint64]*storedMsg)}
	mset.mu.Unlock()
	mset.store.RegisterStorageUpdates(mset.storeUpdates)
}

// Called for any updates to the underlying stream. Lock should not be held.
func (mset *stream) storeUpdates(md, bd int64, seq uint64, subj string) {
	if md == -1 && seq > 0 {
		// We use our consumer list mutex here instead of the main stream lock since it may be held already.
		mset.clsMu.RLock()
		for _, o := range mset.cList {
			o.decStreamPending(seq, subj)
		}
		mset.clsMu.RUnlock()
	}
}

func (mset *stream) addConsumer(name string) *consumer {
	o := &consumer{mset: mset, pending: make(map[uint64]uint64)}
	mset.mu.Lock()
	mset.consumers[name] = o
	mset.mu.Unlock()

	mset.clsMu.Lock()
	mset.cList = append(mset.cList, o)
	mset.clsMu.Unlock()
	return o
}

// Lock should be held.
func (mset *stream) checkInterest(seq uint64, obs *consumer) bool {
	for _, o := range mset.consumers {
		if o != obs && o.needAck(seq) {
			return true
		}
	}
	return false
}

// ackMsg is called into from a consumer when we have a WorkQueue or Interest Retention Policy.
func (mset *stream) ackMsg(o *consumer, seq uint64) {
	if mset.retention == LimitsPolicy {
		return
	}
	mset.mu.RLock()
	hasInterest := mset.checkInterest(seq, o)
	mset.mu.RUnlock()
	if !hasInterest {
		mset.store.RemoveMsg(seq)
	}
}

func (o *consumer) needAck(sseq uint64) bool {
	o.mu.RLock()
	defer o.mu.RUnlock()
	_, ok := o.pending[sseq]
	return ok
}

func (o *consumer) deliver(sseq uint64) {
	o.mu.Lock()
	o.pending[sseq] = uint64(len(o.pending) + 1)
	o.mu.Unlock()
}

// Process a message removed from the stream that may have been pending for us.
func (o *consumer) decStreamPending(sseq uint64, subj string) {
	o.mu.Lock()
	dseq, wasPending := o.pending[sseq]
	o.mu.Unlock()
	// If it was pending process it like an ack.
	if wasPending {
		o.processAckMsg(sseq, dseq)
	}
}

func (o *consumer) processAckMsg(sseq, dseq uint64) {
	o.mu.Lock()
	delete(o.pending, sseq)
	mset := o.mset
	o.mu.Unlock()
	if mset != nil {
		mset.ackMsg(o, sseq)
	}
}

func main() {
	mset := &stream{retention: InterestPolicy, consumers: make(map[string]*consumer)}
	mset.setupStore()
	dlc := mset.addConsumer("dlc")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // messages stored, delivered, then removed by max-age expiry
		defer wg.Done()
		for i := 0; i < 2000; i++ {
			seq, _ := mset.store.StoreMsg("orders.new", []byte("order"))
			dlc.deliver(seq)
			mset.store.RemoveMsg(seq)
		}
	}()
	go func() { // consumers being created via the JS API
		defer wg.Done()
		for i := 0; i < 2000; i++ {
			mset.addConsumer(fmt.Sprintf("C%d", i))
		}
	}()
	wg.Wait()
	fmt.Println("consumers:", len(mset.consumers))
}
