// Project: cockroachdb/cockroach (pkg/kv/kvserver/concurrency/lock_table_waiter.go, pkg/util/tracing/crdbspan.go), v22.1 development, March 2022.
// Bug: the contentionEventTracer is registered on the request's tracing span as a LazyTag, and its notify holds the tracer's mutex while emitLocked records a ContentionEvent into the span (span mutex), whereas collecting the span's recording holds the span mutex and calls the tracer's Render, which takes the tracer's mutex, so a lock-table waiter finishing a wait and a concurrent trace collection deadlock AB-BA (PR #77853, backport #77990 "concurrency: refactor the ContentionEventTracer to avoid deadlock", which moves the state into a separate tag struct and emits outside its lock; code approximate).
package main

import (
	"fmt"
	"sync"
	"time"
)

// ---- pkg/util/tracing ----

type KeyValue struct{ Key, Value string }

// LazyTag is a span tag whose value is computed only when the recording is
// collected.
type LazyTag interface {
	Render() []KeyValue
}

type lazyTag struct {
	key   string
	value interface{}
}

type crdbSpan struct {
	operation string
	mu        struct {
		sync.Mutex
		lazyTags   []lazyTag
		structured []fmt.Stringer
	}
}

type Span struct{ i *crdbSpan }

func (sp *Span) SetLazyTag(key string, value interface{}) {
	sp.i.mu.Lock()
	defer sp.i.mu.Unlock()
	sp.i.mu.lazyTags = append(sp.i.mu.lazyTags, lazyTag{key: key, value: value})
}

func (sp *Span) RecordStructured(item fmt.Stringer) {
	sp.i.mu.Lock()
	defer sp.i.mu.Unlock()
	sp.i.mu.structured = append(sp.i.mu.structured, item)
}

type RecordedSpan struct {
	Operation string
	Tags      map[string]string
}

func (s *crdbSpan) getRecordingNoChildrenLocked() RecordedSpan {
	rs := RecordedSpan{Operation: s.operation, Tags: map[string]string{}}
	for i, st := range s.mu.structured {
		rs.Tags[fmt.Sprint("event", i)] = st.String()
	}
	// Simulates walking the (possibly large) set of child spans first.
	time.Sleep(30 * time.Millisecond)
	for _, kv := range s.mu.lazyTags {
		if v, ok := kv.value.(LazyTag); ok {
			for _, tag := range v.Render() {
				rs.Tags[kv.key+"."+tag.Key] = tag.Value
			}
		}
	}
	return rs
}

func (sp *Span) GetRecording() []RecordedSpan {
	sp.i.mu.Lock()
	defer sp.i.mu.Unlock()
	return []RecordedSpan{sp.i.getRecordingNoChildrenLocked()}
}

// ---- pkg/kv/kvserver/concurrency ----

type TxnMeta struct{ ID string }

type ContentionEvent struct {
	Key      string
	TxnMeta  TxnMeta
	Duration time.Duration
}

func (e *ContentionEvent) String() string {
	return fmt.Sprintf("contention on %s with %s for %s", e.Key, e.TxnMeta.ID, e.Duration)
}

const (
	waitFor = iota
	doneWaiting
)

type waitingState struct {
	kind int
	key  string
	txn  *TxnMeta
}

const tagContentionTracer = "locks"

type contentionEventTracer struct {
	sp      *Span
	onEvent func(event *ContentionEvent) // may be nil
	tag     contentionTag
}

// contentionTag is the lazy span tag holding the waiting state; it never
// calls into the span.
type contentionTag struct {
	mu struct {
		sync.Mutex
		lockWait    time.Duration
		waiting     bool
		waitStart   time.Time
		curStateKey string
		curStateTxn *TxnMeta
		numLocks    int
	}
}

func newContentionEventTracer(sp *Span, onEvent func(*ContentionEvent)) *contentionEventTracer {
	h := &contentionEventTracer{sp: sp, onEvent: onEvent}
	sp.SetLazyTag(tagContentionTracer, &h.tag)
	return h
}

func (tag *contentionTag) Render() []KeyValue {
	tag.mu.Lock()
	defer tag.mu.Unlock()
	tags := []KeyValue{{"num_locks", fmt.Sprint(tag.mu.numLocks)}}
	lockWait := tag.mu.lockWait
	if tag.mu.waiting {
		tags = append(tags, KeyValue{"wait_key", tag.mu.curStateKey})
		lockWait += time.Since(tag.mu.waitStart)
	}
	return append(tags, KeyValue{"lock_wait", lockWait.String()})
}

func (h *contentionEventTracer) notify(s waitingState) {
	if h.sp == nil {
		return
	}
	if event := h.tag.notify(s); event != nil {
		h.emit(event)
	}
}

// notify updates the tag and returns the finished ContentionEvent, if any.
func (tag *contentionTag) notify(s waitingState) (res *ContentionEvent) {
	tag.mu.Lock()
	defer tag.mu.Unlock()
	if tag.mu.waiting && (s.kind == doneWaiting || tag.mu.curStateKey != s.key || tag.mu.curStateTxn.ID != s.txn.ID) {
		res = &ContentionEvent{Key: tag.mu.curStateKey, TxnMeta: *tag.mu.curStateTxn, Duration: time.Since(tag.mu.waitStart)}
		tag.mu.lockWait += res.Duration
		tag.mu.waiting = false
	}
	if s.kind == waitFor && !tag.mu.waiting {
		tag.mu.waiting, tag.mu.waitStart = true, time.Now()
		tag.mu.curStateKey, tag.mu.curStateTxn = s.key, s.txn
		tag.mu.numLocks++
	}
	return res
}

func (h *contentionEventTracer) emit(res *ContentionEvent) {
	if h.onEvent != nil {
		h.onEvent(res)
	}
	h.sp.RecordStructured(res)
}

// WaitOn waits on a lock held by another transaction.
func WaitOn(sp *Span, key string, holder *TxnMeta) {
	tracer := newContentionEventTracer(sp, nil)
	defer tracer.notify(waitingState{kind: doneWaiting})
	tracer.notify(waitingState{kind: waitFor, key: key, txn: holder})
	time.Sleep(20 * time.Millisecond) // the lock holder commits
}

func main() {
	sp := &Span{i: &crdbSpan{operation: "/cockroach.roachpb.Internal/Batch"}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // request evaluation waits in the lock table
		defer wg.Done()
		WaitOn(sp, "/Table/104/1/7/0", &TxnMeta{ID: "7e1a0c2b"})
	}()
	go func() { // crdb_internal.cluster_inflight_traces collects the span
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		rec := sp.GetRecording()
		fmt.Println("recording tags:", len(rec[0].Tags))
	}()
	wg.Wait()
	fmt.Println("done")
}
