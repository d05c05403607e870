// Project: open-telemetry/opentelemetry-collector (processor/groupbytraceprocessor: processor.go, event.go, storage.go, storage_memory.go), v0.11
// Issue: open-telemetry/opentelemetry-collector#1811 "Deadlock in groupbytrace processor", fixed in PR #1842 (memoryStorage.get: defer st.RUnlock())
//
// memoryStorage.get read-locks the storage (line 61) and, when the trace
// is not in the map, returns early (line 64) without RUnlock; only the
// found path releases the lock. markAsReleased calls get through the storage
// interface (line 239) from a goroutine the event machine starts when a
// trace expires. A trace is missing from the storage when late spans re-add it
// to the ring buffer after its first expiry and the first release's
// traceRemoved event then deletes its spans: the second expiry finds the trace
// in the ring buffer but not in the storage. The read lock leaks, and the next
// batch handled by the event machine blocks in createOrAppend's write lock
// (line 54); from then on the event loop is stuck and Shutdown waits for
// the stop event forever (line 145). The fix is `defer st.RUnlock()`.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type TraceID string

type ResourceSpans struct {
	TraceID TraceID
	Spans   []string
}

type Traces []ResourceSpans

// TraceConsumer is the next consumer in the pipeline.
type TraceConsumer interface {
	ConsumeTraces(td Traces) error
}

// ---- storage.go / storage_memory.go ----

type storage interface {
	createOrAppend(TraceID, ResourceSpans) error
	get(TraceID) ([]ResourceSpans, error)
	delete(TraceID) ([]ResourceSpans, error)
}

type memoryStorage struct {
	sync.RWMutex
	content map[TraceID][]ResourceSpans
}

var _ storage = (*memoryStorage)(nil)

func (st *memoryStorage) createOrAppend(traceID TraceID, rs ResourceSpans) error {
	st.Lock()
	st.content[traceID] = append(st.content[traceID], rs)
	st.Unlock()
	return nil
}

func (st *memoryStorage) get(traceID TraceID) ([]ResourceSpans, error) {
	st.RLock()
	rss, ok := st.content[traceID]
	if !ok {
		return nil, nil
	}

	result := append([]ResourceSpans(nil), rss...)
	st.RUnlock()
	return result, nil
}

func (st *memoryStorage) delete(traceID TraceID) ([]ResourceSpans, error) {
	st.Lock()
	defer st.Unlock()
	rss := st.content[traceID]
	delete(st.content, traceID)
	return rss, nil
}

// ---- event.go ----

type eventType int

const (
	traceReceived eventType = iota
	traceExpired
	traceReleased
	traceRemoved
	stop
)

type event struct {
	typ     eventType
	payload interface{}
}

type eventMachine struct {
	events chan event

	onTraceReceived func(Traces) error
	onTraceExpired  func(TraceID) error
	onTraceReleased func([]ResourceSpans) error
	onTraceRemoved  func(TraceID) error

	shutdownLock *sync.RWMutex
	closed       bool
}

func (em *eventMachine) start() {
	for e := range em.events {
		switch e.typ {
		case traceReceived:
			em.onTraceReceived(e.payload.(Traces))
		case traceExpired:
			em.onTraceExpired(e.payload.(TraceID))
		case traceReleased:
			em.onTraceReleased(e.payload.([]ResourceSpans))
		case traceRemoved:
			em.onTraceRemoved(e.payload.(TraceID))
		case stop:
			em.shutdownLock.Lock()
			em.closed = true
			em.shutdownLock.Unlock()
			e.payload.(*sync.WaitGroup).Done()
			return
		}
	}
}

func (em *eventMachine) fire(events ...event) {
	em.shutdownLock.RLock()
	defer em.shutdownLock.RUnlock()
	if em.closed {
		return
	}
	for _, e := range events {
		em.events <- e
	}
}

func (em *eventMachine) shutdown() {
	wg := &sync.WaitGroup{}
	wg.Add(1)
	em.events <- event{typ: stop, payload: wg}
	wg.Wait()
}

// ---- ring_buffer.go (trimmed) ----

type ringBuffer struct {
	ids map[TraceID]struct{}
}

func (r *ringBuffer) put(traceID TraceID)           { r.ids[traceID] = struct{}{} }
func (r *ringBuffer) contains(traceID TraceID) bool { _, ok := r.ids[traceID]; return ok }
func (r *ringBuffer) delete(traceID TraceID)        { delete(r.ids, traceID) }

// ---- processor.go ----

type groupByTraceProcessor struct {
	nextConsumer TraceConsumer
	waitDuration time.Duration
	eventMachine *eventMachine
	ringBuffer   *ringBuffer
	st           storage
}

func newGroupByTraceProcessor(st storage, next TraceConsumer, wait time.Duration) *groupByTraceProcessor {
	em := &eventMachine{events: make(chan event, 200), shutdownLock: &sync.RWMutex{}}
	sp := &groupByTraceProcessor{
		nextConsumer: next,
		waitDuration: wait,
		eventMachine: em,
		ringBuffer:   &ringBuffer{ids: map[TraceID]struct{}{}},
		st:           st,
	}
	em.onTraceReceived = sp.onTraceReceived
	em.onTraceExpired = sp.onTraceExpired
	em.onTraceReleased = sp.onTraceReleased
	em.onTraceRemoved = sp.onTraceRemoved
	return sp
}

func (sp *groupByTraceProcessor) ConsumeTraces(td Traces) error {
	sp.eventMachine.fire(event{typ: traceReceived, payload: td})
	return nil
}

func (sp *groupByTraceProcessor) Start() { go sp.eventMachine.start() }

func (sp *groupByTraceProcessor) Shutdown() { sp.eventMachine.shutdown() }

func (sp *groupByTraceProcessor) onTraceReceived(batch Traces) error {
	for _, rs := range batch {
		if err := sp.processBatch(rs); err != nil {
			fmt.Println("failed to process batch:", err)
		}
	}
	return nil
}

func (sp *groupByTraceProcessor) processBatch(rs ResourceSpans) error {
	traceID := rs.TraceID
	if sp.ringBuffer.contains(traceID) {
		// it exists in memory already, just append the spans to the trace in the storage
		return sp.st.createOrAppend(traceID, rs)
	}

	sp.ringBuffer.put(traceID)
	if err := sp.st.createOrAppend(traceID, rs); err != nil {
		return err
	}
	time.AfterFunc(sp.waitDuration, func() {
		// if the event machine has stopped, it will just discard the event
		sp.eventMachine.fire(event{typ: traceExpired, payload: traceID})
	})
	return nil
}

func (sp *groupByTraceProcessor) onTraceExpired(traceID TraceID) error {
	if !sp.ringBuffer.contains(traceID) {
		// we likely received multiple batches with spans for the same trace
		// and released this trace already
		return nil
	}
	sp.ringBuffer.delete(traceID)

	// this might block, but we don't need to wait
	go func() {
		if err := sp.markAsReleased(traceID); err != nil {
			fmt.Println("markAsReleased:", err)
		}
	}()
	return nil
}

func (sp *groupByTraceProcessor) markAsReleased(traceID TraceID) error {
	// #get is a potentially blocking operation
	trace, err := sp.st.get(traceID)
	if err != nil {
		return fmt.Errorf("couldn't retrieve trace %q from the storage: %w", traceID, err)
	}
	if trace == nil {
		return fmt.Errorf("the trace %q couldn't be found at the storage", traceID)
	}

	// atomically fire the two events, so that a concurrent shutdown won't leave
	// an orphaned trace in the storage
	sp.eventMachine.fire(event{typ: traceReleased, payload: trace}, event{typ: traceRemoved, payload: traceID})
	return nil
}

func (sp *groupByTraceProcessor) onTraceReleased(rss []ResourceSpans) error {
	return sp.nextConsumer.ConsumeTraces(Traces(rss))
}

func (sp *groupByTraceProcessor) onTraceRemoved(traceID TraceID) error {
	trace, err := sp.st.delete(traceID)
	if err != nil {
		return err
	}
	if trace == nil {
		return errors.New("trace not found at the storage")
	}
	return nil
}

// exporter is the next consumer: an exporter doing a network round trip.
type exporter struct{}

func (exporter) ConsumeTraces(td Traces) error {
	time.Sleep(80 * time.Millisecond)
	fmt.Println("exported trace", td[0].TraceID, "with", len(td), "resource spans")
	return nil
}

func main() {
	st := &memoryStorage{content: map[TraceID][]ResourceSpans{}}
	sp := newGroupByTraceProcessor(st, exporter{}, 40*time.Millisecond)
	sp.Start()

	sp.ConsumeTraces(Traces{{TraceID: "X", Spans: []string{"GET /"}}})
	time.Sleep(10 * time.Millisecond)
	sp.ConsumeTraces(Traces{{TraceID: "A", Spans: []string{"checkout"}}})

	// Late spans of trace A arrive after it expired, while the event loop is
	// busy exporting trace X.
	time.Sleep(70 * time.Millisecond)
	sp.ConsumeTraces(Traces{{TraceID: "A", Spans: []string{"charge-card"}}})

	time.Sleep(180 * time.Millisecond)
	sp.ConsumeTraces(Traces{{TraceID: "C", Spans: []string{"GET /health"}}})

	time.Sleep(40 * time.Millisecond)
	sp.Shutdown()
	fmt.Println("processor shut down")
}
