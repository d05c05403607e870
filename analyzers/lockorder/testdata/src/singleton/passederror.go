package main

import (
	"errors"
	"fmt"
	"sync"
)

// An error formatted under the span's lock whose Error records an event
// on the span (opentelemetry-go's RecordError, #8782): error is no
// interface of the package, but every call of RecordError passes a
// *queryError, so err.Error() runs queryError's Error, and the program
// makes one span.

type span struct {
	mu     sync.Mutex
	events []string
}

func (s *span) AddEvent(name string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, name)
}

func (s *span) RecordError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, "exception: "+err.Error()) // want `span.mu locked again by queryError.Error -> span.AddEvent \(at passederror.go:\d+\), the same lock: the program makes one span \(at passederror.go:\d+\), while held since passederror.go:\d+: self-deadlock \[double-lock\]`
}

type queryError struct {
	sp    *span
	query string
	cause error
}

func (e *queryError) Error() string {
	e.sp.AddEvent("error.rendered")
	return "query " + e.query + ": " + e.cause.Error()
}

// A status whose error is formatted under its own lock: every call
// passes an error of another package (errors.New), whose Error takes no
// lock here. Silent.
type status struct {
	mu   sync.Mutex
	last string
}

func (st *status) fail(err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.last = err.Error()
}

func runSpanErrors() {
	sp := &span{}
	sp.RecordError(&queryError{sp: sp, query: "SELECT 1", cause: errors.New("reset")})
	st := &status{}
	st.fail(errors.New("timeout"))
	fmt.Println(len(sp.events), st.last)
}
