// Project: jaegertracing/jaeger (plugin/storage/memory)
// Bug: (reconstruction) Store.FindTraces held m.RLock() and, for every matching
//      trace ID, called the public GetTrace, which takes m.RLock() again. When the
//      collector's WriteSpan (m.Lock()) arrived between the two, the writer waited
//      for the outer read lock and the nested RLock queued behind the pending
//      writer: the query service and the collector hung forever.
// Fix: FindTraces copies traces through the internal copyTrace helper while it
//      already holds the read lock instead of re-entering GetTrace.

package jaegermemstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

var ErrTraceNotFound = errors.New("trace not found")

type TraceID struct{ High, Low uint64 }

type Span struct {
	TraceID       TraceID
	SpanID        uint64
	OperationName string
	ServiceName   string
	StartTime     time.Time
	Duration      time.Duration
	Tags          map[string]string
}

type Trace struct{ Spans []*Span }

type TraceQueryParameters struct {
	ServiceName   string
	OperationName string
	NumTraces     int
}

// Adjuster is applied to every trace returned by the store (e.g. SpanIDDeduper).
type Adjuster interface {
	Adjust(*Trace) (*Trace, error)
}

type Store struct {
	sync.RWMutex
	ids        []TraceID
	traces     map[TraceID]*Trace
	services   map[string]struct{}
	operations map[string]map[string]struct{}
	deduper    Adjuster
	maxTraces  int
	index      int
}

func NewStore(maxTraces int, deduper Adjuster) *Store {
	return &Store{ids: make([]TraceID, maxTraces), traces: map[TraceID]*Trace{},
		services: map[string]struct{}{}, operations: map[string]map[string]struct{}{},
		deduper: deduper, maxTraces: maxTraces}
}

func (m *Store) WriteSpan(_ context.Context, span *Span) error {
	m.Lock()
	defer m.Unlock()
	if _, ok := m.operations[span.ServiceName]; !ok {
		m.operations[span.ServiceName] = map[string]struct{}{}
	}
	m.operations[span.ServiceName][span.OperationName] = struct{}{}
	m.services[span.ServiceName] = struct{}{}
	if _, ok := m.traces[span.TraceID]; !ok {
		m.traces[span.TraceID] = &Trace{}
		if m.maxTraces > 0 { // ring buffer eviction
			delete(m.traces, m.ids[m.index])
			m.ids[m.index] = span.TraceID
			m.index = (m.index + 1) % m.maxTraces
		}
	}
	m.traces[span.TraceID].Spans = append(m.traces[span.TraceID].Spans, span)
	return nil
}

func (m *Store) GetTrace(_ context.Context, traceID TraceID) (*Trace, error) {
	m.RLock()
	defer m.RUnlock()
	trace, ok := m.traces[traceID]
	if !ok {
		return nil, ErrTraceNotFound
	}
	return m.copyTrace(trace)
}

func (m *Store) copyTrace(trace *Trace) (*Trace, error) {
	cp := &Trace{Spans: make([]*Span, len(trace.Spans))}
	for i, s := range trace.Spans {
		sc := *s
		cp.Spans[i] = &sc
	}
	if m.deduper == nil {
		return cp, nil
	}
	return m.deduper.Adjust(cp)
}

func (m *Store) GetServices(_ context.Context) ([]string, error) {
	m.RLock()
	defer m.RUnlock()
	var ret []string
	for s := range m.services {
		ret = append(ret, s)
	}
	return ret, nil
}

func (m *Store) FindTraces(ctx context.Context, query *TraceQueryParameters) ([]*Trace, error) {
	m.RLock()
	defer m.RUnlock()
	var retMe []*Trace
	for _, id := range m.findTraceIDs(query) {
		trace, err := m.GetTrace(ctx, id)
		if err != nil {
			return nil, err
		}
		retMe = append(retMe, trace)
	}
	return retMe, nil
}

func (m *Store) findTraceIDs(query *TraceQueryParameters) []TraceID {
	var ids []TraceID
	for id, trace := range m.traces {
		if query.NumTraces > 0 && len(ids) >= query.NumTraces {
			break
		}
		for _, span := range trace.Spans {
			if span.ServiceName == query.ServiceName &&
				(query.OperationName == "" || span.OperationName == query.OperationName) {
				ids = append(ids, id)
				break
			}
		}
	}
	return ids
}

// slowDeduper stands in for deduplicating span IDs of large traces.
type slowDeduper struct{ perTrace time.Duration }

func (d slowDeduper) Adjust(t *Trace) (*Trace, error) {
	time.Sleep(d.perTrace)
	return t, nil
}

func TestFindTracesDuringIngestion(t *testing.T) {
	ctx := context.Background()
	m := NewStore(100, slowDeduper{perTrace: 40 * time.Millisecond})
	for i := uint64(1); i <= 3; i++ {
		_ = m.WriteSpan(ctx, &Span{TraceID: TraceID{Low: i}, SpanID: i, ServiceName: "frontend",
			OperationName: "HTTP GET /dispatch", StartTime: time.Now(), Duration: time.Millisecond})
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // jaeger-query: GET /api/traces?service=frontend
		defer wg.Done()
		traces, err := m.FindTraces(ctx, &TraceQueryParameters{ServiceName: "frontend", NumTraces: 20})
		if err != nil || len(traces) != 3 {
			t.Errorf("FindTraces = %d traces, %v", len(traces), err)
		}
	}()
	go func() { // collector: span arriving from an agent
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		_ = m.WriteSpan(ctx, &Span{TraceID: TraceID{Low: 99}, SpanID: 1, ServiceName: "driver",
			OperationName: "FindDriverIDs", StartTime: time.Now()})
	}()
	wg.Wait()
}
