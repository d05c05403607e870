// Project: cockroachdb/cockroach (pkg/util/tracing/crdbspan.go, span.go), v22.2 development, May 2022.
// Bug: crdbSpan.notifyEventListeners, run when a child span records a StructuredEvent, holds the child's s.mu while it recursively notifies the parent (locking the parent's mu) and calls the EventListeners, which inverts the parent-before-child lock order used when a parent collects its verbose recording (parent mu, then each open child's mu), so a child emitting progress and a concurrent trace collection deadlock AB-BA (issue #81361, PR #81379 "tracing: fix inconsistent lock ordering when notifying event listeners", which notifies the parent and listeners outside the child's lock; code approximate).
package main

import (
	"fmt"
	"sync"
	"time"
)

type Structured interface{ String() string }

// EventListener is an object that can be registered to listen for Structured
// events recorded by the span and its children.
type EventListener interface {
	Notify(event Structured)
}

type RecordedSpan struct {
	Operation  string
	Structured []string
}

type spanRef struct{ Span *Span }

type spanInner struct{ crdb *crdbSpan }

type Span struct{ i spanInner }

type recordingState struct {
	structured []Structured
	// notifyParentOnStructuredEvent is true if the span's parent has asked
	// to be notified of every StructuredEvent recording on this span.
	notifyParentOnStructuredEvent bool
}

type crdbSpanMu struct {
	sync.Mutex
	finished     bool
	parent       spanRef
	openChildren []spanRef
	recording    recordingState
}

type crdbSpan struct {
	operation      string
	eventListeners []EventListener
	// Locking rules: if locking both a parent and a child, the parent must be
	// locked first.
	mu crdbSpanMu
}

func (s *crdbSpan) addChild(child *crdbSpan, notifyParent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.openChildren = append(s.mu.openChildren, spanRef{Span: &Span{i: spanInner{crdb: child}}})
	child.mu.Lock()
	child.mu.parent = spanRef{Span: &Span{i: spanInner{crdb: s}}}
	child.mu.recording.notifyParentOnStructuredEvent = notifyParent
	child.mu.Unlock()
}

func (s *crdbSpan) recordInternal(item Structured) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.recording.structured = append(s.mu.recording.structured, item)
}

func (s *crdbSpan) recordStructured(item Structured) {
	s.recordInternal(item)
	// If there are any listeners registered on this span or its ancestors,
	// notify them.
	s.notifyEventListeners(item)
}

// notifyEventListeners recursively notifies all the EventListeners registered
// with this span and any ancestor spans in the Recording, of a StructuredEvent.
func (s *crdbSpan) notifyEventListeners(item Structured) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.finished {
		return
	}
	if s.mu.recording.notifyParentOnStructuredEvent {
		parent := s.mu.parent.Span.i.crdb
		parent.notifyEventListeners(item)
	}
	for _, listener := range s.eventListeners {
		listener.Notify(item)
	}
}

func (s *crdbSpan) getRecordingNoChildrenLocked() RecordedSpan {
	rs := RecordedSpan{Operation: s.operation}
	for _, st := range s.mu.recording.structured {
		rs.Structured = append(rs.Structured, st.String())
	}
	return rs
}

// getVerboseRecording returns the Span's recording, including its children.
func (s *crdbSpan) getVerboseRecording() []RecordedSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	result := []RecordedSpan{s.getRecordingNoChildrenLocked()}
	time.Sleep(30 * time.Millisecond) // a large recording takes a while to copy
	for _, child := range s.mu.openChildren {
		result = append(result, child.Span.i.crdb.getVerboseRecording()...)
	}
	return result
}

func (sp *Span) RecordStructured(item Structured) { sp.i.crdb.recordStructured(item) }
func (sp *Span) GetRecording() []RecordedSpan     { return sp.i.crdb.getVerboseRecording() }

// ---- a user: restore progress reporting ----

type RestoreProgress struct{ ProgressDetails string }

func (p *RestoreProgress) String() string { return "restore progress: " + p.ProgressDetails }

type progressTracker struct {
	mu    sync.Mutex
	spans int
}

func (t *progressTracker) Notify(event Structured) {
	if _, ok := event.(*RestoreProgress); ok {
		t.mu.Lock()
		t.spans++
		t.mu.Unlock()
	}
}

func main() {
	tracker := &progressTracker{}
	parent := &Span{i: spanInner{crdb: &crdbSpan{operation: "restoreDataProcessor", eventListeners: []EventListener{tracker}}}}
	child := &Span{i: spanInner{crdb: &crdbSpan{operation: "restore.processRestoreSpanEntry"}}}
	parent.i.crdb.addChild(child.i.crdb, true /* notifyParent */)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the DistSQL flow collects the processor's trace
		defer wg.Done()
		fmt.Println("spans in recording:", len(parent.GetRecording()))
	}()
	go func() { // a restore worker finishes a span entry
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		child.RecordStructured(&RestoreProgress{ProgressDetails: "/Table/104/{1-2}"})
	}()
	wg.Wait()
	fmt.Println("done, progress events:", tracker.spans)
}
