// Project: open-telemetry/opentelemetry-go (sdk/trace/span.go, recordingSpan.RecordError), versions after PR 5874 (late 2024, version approximate) until 2026.
// Bug: recordingSpan.RecordError takes the span mutex s.mu first and only then formats the caller's error with err.Error() and
// typeStr(err). When the error's Error method records telemetry on the same span (AddEvent, SetAttributes), it re-enters the span and
// blocks on s.mu, which its own goroutine already holds. Reported as issue #8782 (introduced when PR #5874 moved the lock ahead of the
// error formatting) and fixed by PR #8815, which formats the error outside the lock and records the event through AddEvent.
package main

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
)

type KeyValue struct {
	Key   string
	Value string
}

func String(k, v string) KeyValue { return KeyValue{Key: k, Value: v} }

// EventConfig and EventOption mirror go.opentelemetry.io/otel/trace.
type EventConfig struct {
	attributes []KeyValue
	timestamp  time.Time
	stackTrace bool
}

type EventOption interface{ applyEvent(EventConfig) EventConfig }

type attributeOption []KeyValue

func (o attributeOption) applyEvent(c EventConfig) EventConfig {
	c.attributes = append(c.attributes, []KeyValue(o)...)
	return c
}

func WithAttributes(attrs ...KeyValue) EventOption { return attributeOption(attrs) }

func NewEventConfig(options ...EventOption) EventConfig {
	c := EventConfig{}
	for _, o := range options {
		c = o.applyEvent(c)
	}
	if c.timestamp.IsZero() {
		c.timestamp = time.Now()
	}
	return c
}

type Event struct {
	Name       string
	Attributes []KeyValue
	Time       time.Time
}

// evictedQueue keeps at most capacity items and counts the dropped ones.
type evictedQueue[T any] struct {
	queue         []T
	capacity      int
	droppedCount  int
	logDroppedMsg string
}

func (eq *evictedQueue[T]) add(value T) {
	if eq.capacity > 0 && len(eq.queue) == eq.capacity {
		eq.queue = eq.queue[1:]
		eq.droppedCount++
	}
	eq.queue = append(eq.queue, value)
}

type SpanLimits struct{ AttributePerEventCountLimit int }

type TracerProvider struct{ spanLimits SpanLimits }

type tracer struct{ provider *TracerProvider }

type recordingSpan struct {
	mu         sync.Mutex
	name       string
	startTime  time.Time
	endTime    time.Time
	attributes []KeyValue
	events     evictedQueue[Event]
	tracer     *tracer
}

// isRecording returns if this span is being recorded. It assumes s.mu is held by the caller.
func (s *recordingSpan) isRecording() bool {
	if s == nil {
		return false
	}
	return s.endTime.IsZero()
}

func (s *recordingSpan) IsRecording() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.isRecording()
}

func (s *recordingSpan) AddEvent(name string, o ...EventOption) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.isRecording() {
		return
	}
	s.addEvent(name, o...)
}

// addEvent adds an event with the provided name and options. It assumes s.mu is held by the caller.
func (s *recordingSpan) addEvent(name string, o ...EventOption) {
	c := NewEventConfig(o...)
	e := Event{Name: name, Attributes: c.attributes, Time: c.timestamp}
	if limit := s.tracer.provider.spanLimits.AttributePerEventCountLimit; limit > 0 && len(e.Attributes) > limit {
		e.Attributes = e.Attributes[:limit]
	}
	s.events.add(e)
}

func typeStr(i any) string {
	t := reflect.TypeOf(i)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return fmt.Sprintf("%s.%s", t.PkgPath(), t.Name())
}

func (s *recordingSpan) RecordError(err error, opts ...EventOption) {
	if s == nil || err == nil || !s.IsRecording() {
		return
	}

	// Format the caller's error outside the span lock; Error may re-enter the span.
	opts = append(opts, WithAttributes(
		String("exception.type", typeStr(err)),
		String("exception.message", err.Error()),
	))
	s.AddEvent("exception", opts...)
}

func (s *recordingSpan) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endTime = time.Now()
}

// queryError is an application error that annotates the span it belongs to the first time it is rendered.
type queryError struct {
	span  *recordingSpan
	query string
	cause error
}

func (e *queryError) Error() string {
	e.span.AddEvent("error.rendered", WithAttributes(String("db.statement", e.query)))
	return "query " + e.query + ": " + e.cause.Error()
}

func main() {
	tp := &TracerProvider{spanLimits: SpanLimits{AttributePerEventCountLimit: 128}}
	span := &recordingSpan{name: "db.query", startTime: time.Now(), tracer: &tracer{provider: tp},
		events: evictedQueue[Event]{capacity: 128, logDroppedMsg: "limit reached: dropping trace trace.Event"}}

	err := &queryError{span: span, query: "SELECT 1", cause: errors.New("connection reset")}
	span.RecordError(err)
	span.End()
	fmt.Println("events recorded:", len(span.events.queue))
}
