// Project: nats-io/nats-server v2.12/v2.14 (JetStream, standalone mode).
// Files/functions: server/consumer.go (stream.addConsumerWithAssignment, consumer.selectStartingSeqNo),
// server/memstore.go (memStore.FilteredState, memStore.FastState through the StreamStore
// interface), server/jetstream_api.go (Server.jsConsumerCreateRequest).
// Issue nats-io/nats-server#8229 "Consumer creation can leak stream lock on starting sequence
// errors" (May 2026), fixed by unlocking the stream (and deleting the consumer's store) before
// returning the selectStartingSeqNo error.
//
// addConsumerWithAssignment write-locks the stream (mset.mu) for the whole registration of a new
// consumer. In standalone/direct mode it calls o.selectStartingSeqNo() while still holding it;
// for a DeliverLast consumer with filter subjects that asks the StreamStore for FilteredState,
// which can fail (here the memory store has just been stopped). The error branch returned
// straight to the API handler without mset.mu.Unlock(), so the stream stays write-locked. The
// client's retry of the consumer create (or any later stream info, publish, or purge) blocks on
// the stream lock forever. The fix releases the stream lock (and stops the half-built consumer)
// on that error path.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var ErrStoreClosed = errors.New("nats: store closed")

type DeliverPolicy int

const (
	DeliverAll DeliverPolicy = iota
	DeliverLast
)

type ConsumerConfig struct {
	Durable        string
	DeliverPolicy  DeliverPolicy
	FilterSubjects []string
	Direct         bool
}

type StreamState struct{ FirstSeq, LastSeq uint64 }

type SimpleState struct{ First, Last uint64 }

type StreamStore interface {
	FastState(*StreamState)
	FilteredState(sseq uint64, subject string) (SimpleState, error)
}

type memStore struct {
	mu     sync.RWMutex
	state  StreamState
	closed bool
}

func (ms *memStore) FastState(state *StreamState) {
	ms.mu.RLock()
	*state = ms.state
	ms.mu.RUnlock()
}

func (ms *memStore) FilteredState(sseq uint64, subj string) (SimpleState, error) {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	if ms.closed {
		return SimpleState{}, ErrStoreClosed
	}
	return SimpleState{First: ms.state.FirstSeq, Last: ms.state.LastSeq}, nil
}

type subjectFilter struct{ subject string }

type stream struct {
	mu        sync.RWMutex
	name      string
	store     StreamStore
	consumers map[string]*consumer
}

type consumer struct {
	mu    sync.RWMutex
	mset  *stream
	name  string
	cfg   ConsumerConfig
	subjf []*subjectFilter

	sseq, dseq, asflr, adflr uint64
}

// Will select the starting sequence.
func (o *consumer) selectStartingSeqNo() error {
	var state StreamState
	o.mset.store.FastState(&state)
	switch o.cfg.DeliverPolicy {
	case DeliverAll:
		o.sseq = state.FirstSeq
	case DeliverLast:
		for _, filter := range o.subjf {
			ss, err := o.mset.store.FilteredState(1, filter.subject)
			if err != nil {
				return err
			}
			if ss.Last > o.sseq {
				o.sseq = ss.Last
			}
		}
	}
	o.dseq = 1
	o.adflr, o.asflr = o.dseq-1, o.sseq-1
	return nil
}

func (mset *stream) setConsumer(o *consumer) { mset.consumers[o.name] = o }

// stop releases the consumer we built; it was never registered.
func (o *consumer) stop() {
	o.mu.Lock()
	o.mset = nil
	o.mu.Unlock()
}

func (mset *stream) addConsumerWithAssignment(config *ConsumerConfig, standalone bool) (*consumer, error) {
	// Hold mset lock here.
	mset.mu.Lock()
	if mset.consumers == nil {
		mset.mu.Unlock()
		return nil, errors.New("stream is invalid")
	}
	if eo, ok := mset.consumers[config.Durable]; ok {
		mset.mu.Unlock()
		return eo, nil
	}

	o := &consumer{mset: mset, name: config.Durable, cfg: *config}
	for _, f := range config.FilterSubjects {
		o.subjf = append(o.subjf, &subjectFilter{subject: f})
	}

	if config.Direct || standalone {
		if err := o.selectStartingSeqNo(); err != nil {
			mset.mu.Unlock()
			o.stop()
			return nil, err
		}
	}

	mset.setConsumer(o)
	mset.mu.Unlock()
	return o, nil
}

type Server struct{ standalone bool }

func (s *Server) jsConsumerCreateRequest(mset *stream, cfg *ConsumerConfig) {
	o, err := mset.addConsumerWithAssignment(cfg, s.standalone)
	if err != nil {
		fmt.Printf("consumer create %q on %q failed: %v\n", cfg.Durable, mset.name, err)
		return
	}
	fmt.Printf("consumer %q created at stream seq %d\n", o.name, o.sseq)
}

func main() {
	s := &Server{standalone: true}
	ms := &memStore{state: StreamState{FirstSeq: 1, LastSeq: 500}}
	mset := &stream{name: "EVENTS", store: ms, consumers: map[string]*consumer{}}

	// The stream's store is being stopped while a DeliverLast consumer is created.
	ms.mu.Lock()
	ms.closed = true
	ms.mu.Unlock()
	s.jsConsumerCreateRequest(mset, &ConsumerConfig{Durable: "last-orders", DeliverPolicy: DeliverLast, FilterSubjects: []string{"events.orders.>"}})

	// The store is reopened and the client retries the request.
	ms.mu.Lock()
	ms.closed = false
	ms.mu.Unlock()
	s.jsConsumerCreateRequest(mset, &ConsumerConfig{Durable: "last-orders", DeliverPolicy: DeliverLast, FilterSubjects: []string{"events.orders.>"}})
}
