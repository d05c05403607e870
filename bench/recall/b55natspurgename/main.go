// Project: nats-io/nats-server v2.12 (JetStream).
// Files/functions: server/jetstream_cluster.go (jetStream.applyStreamEntries), server/stream.go
// (stream.purge, stream.purgeLocked, stream.name, stream.nameLocked), server/consumer.go
// (consumer.purge, consumer.writeStoreState, consumer.writeStoreStateUnlocked), server/filestore.go
// (consumerFileStore.Update through the ConsumerStore interface).
// PR nats-io/nats-server#7546 "Fix deadlock on stream purge when consumer store returns error"
// (November 2025).
//
// A purge entry applied from the stream's raft log runs stream.purge, which write-locks the
// stream and, inside purgeLocked, walks the stream's consumer list calling consumer.purge for
// each one. consumer.purge is documented as "the parent stream lock MUST be held". It updates the
// consumer's sequences and persists them through the ConsumerStore; when the store returns an
// error (here the consumer's file store has already been closed) the warning is formatted with
// mset.name(), which is nameLocked(true) and read-locks the stream again. The same goroutine
// holds the stream's write lock, so the read lock can never be granted and the apply loop for the
// stream stops forever. The fix logs with mset.nameLocked(false).
package main

import (
	"errors"
	"fmt"
	"sync"
)

var ErrStoreClosed = errors.New("nats: store closed")

type Server struct{ name string }

func (s *Server) Warnf(format string, v ...any) { fmt.Printf("[WRN] "+format+"\n", v...) }

type (
	Account      struct{ Name string }
	StreamConfig struct{ Name string }
	SequencePair struct{ Consumer, Stream uint64 }
)

type ConsumerState struct{ Delivered, AckFloor SequencePair }

type ConsumerStore interface {
	Update(state *ConsumerState) error
}

type consumerFileStore struct {
	mu     sync.Mutex
	closed bool
	state  ConsumerState
}

func (o *consumerFileStore) Update(state *ConsumerState) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return ErrStoreClosed
	}
	o.state = *state
	return nil
}

type JSApiStreamPurgeRequest struct{ Subject string }

type stream struct {
	mu    sync.RWMutex
	cfg   StreamConfig
	lseq  uint64
	first uint64

	clsMu sync.RWMutex
	cList []*consumer
}

func (mset *stream) name() string { return mset.nameLocked(true) }

func (mset *stream) nameLocked(needLock bool) string {
	if needLock {
		mset.mu.RLock()
		defer mset.mu.RUnlock()
	}
	return mset.cfg.Name
}

func (mset *stream) purge(preq *JSApiStreamPurgeRequest) (uint64, error) {
	return mset.purgeLocked(preq, true)
}

func (mset *stream) purgeLocked(preq *JSApiStreamPurgeRequest, needLock bool) (purged uint64, err error) {
	if needLock {
		mset.mu.Lock()
		defer mset.mu.Unlock()
	}
	purged = mset.lseq - mset.first + 1
	fseq, lseq := mset.lseq+1, mset.lseq
	mset.first = fseq

	mset.clsMu.RLock()
	defer mset.clsMu.RUnlock()
	for _, o := range mset.cList {
		o.mu.RLock()
		doPurge := preq == nil || preq.Subject == "" || preq.Subject == o.filter
		o.mu.RUnlock()
		if doPurge {
			o.purge(fseq, lseq, false)
		}
	}
	return purged, nil
}

type consumer struct {
	mu     sync.RWMutex
	srv    *Server
	acc    *Account
	mset   *stream
	name   string
	filter string
	store  ConsumerStore
	leader bool

	sseq, dseq, asflr, adflr uint64
}

func (o *consumer) isLeader() bool { return o.leader }

// This is when the underlying stream has been purged.
// Consumer lock should NOT be held but the parent stream lock MUST be held.
func (o *consumer) purge(sseq uint64, slseq uint64, isWider bool) {
	if !o.isLeader() {
		return
	}
	o.mu.Lock()
	if o.sseq < sseq {
		o.sseq = sseq
	}
	if o.asflr < sseq {
		o.asflr = sseq - 1
		o.adflr = o.dseq - 1
	}
	s, acc, mset, name := o.srv, o.acc, o.mset, o.name
	o.mu.Unlock()

	if err := o.writeStoreState(); err != nil && s != nil && mset != nil {
		s.Warnf("Consumer '%s > %s > %s' error on write store state from purge: %v", acc.Name, mset.name(), name, err)
	}
}

func (o *consumer) writeStoreState() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.writeStoreStateUnlocked()
}

func (o *consumer) writeStoreStateUnlocked() error {
	if o.store == nil {
		return nil
	}
	state := ConsumerState{
		Delivered: SequencePair{Consumer: o.dseq - 1, Stream: o.sseq - 1},
		AckFloor:  SequencePair{Consumer: o.adflr, Stream: o.asflr},
	}
	return o.store.Update(&state)
}

type entryOp uint8

const purgeStreamOp entryOp = 3 // the stream purge operation in the raft log

type streamPurge struct {
	Stream  string
	Request *JSApiStreamPurgeRequest
}

type entry struct {
	op    entryOp
	purge *streamPurge
}

type jetStream struct{ srv *Server }

func (js *jetStream) applyStreamEntries(mset *stream, entries []*entry) error {
	for _, e := range entries {
		if e.op == purgeStreamOp {
			if _, err := mset.purge(e.purge.Request); err != nil {
				js.srv.Warnf("JetStream cluster failed to purge stream %q: %v", e.purge.Stream, err)
			}
		}
	}
	return nil
}

func main() {
	s := &Server{name: "n1"}
	acc := &Account{Name: "$G"}
	mset := &stream{cfg: StreamConfig{Name: "ORDERS"}, lseq: 100, first: 1}
	// The consumer's store was closed underneath it (consumer being stopped), so Update fails.
	o := &consumer{srv: s, acc: acc, mset: mset, name: "processor", leader: true,
		store: &consumerFileStore{closed: true}, sseq: 42, dseq: 40, asflr: 39, adflr: 38}
	mset.cList = append(mset.cList, o)

	js := &jetStream{srv: s}
	js.applyStreamEntries(mset, []*entry{{op: purgeStreamOp, purge: &streamPurge{Stream: "ORDERS"}}})
	fmt.Println("purged stream", mset.name())
}
