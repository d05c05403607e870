// Package accidentiface: an interface call is resolved only to the
// package's types that the package converts to the interface (crypto/tls:
// transcriptHash.Write is implemented by hash.Hash values, and by *Conn by
// accident).
package accidentiface

import "sync"

type transcript interface {
	Write([]byte) (int, error)
}

type Conn struct {
	out sync.Mutex
	hs  sync.Mutex
}

// Write takes hs then out.
func (c *Conn) Write(b []byte) (int, error) {
	c.hs.Lock()
	defer c.hs.Unlock()
	c.out.Lock()
	defer c.out.Unlock()
	return len(b), nil
}

// writeRecord holds out while writing to a transcript: never a *Conn,
// which the package never converts to transcript. Silent.
func (c *Conn) writeRecord(t transcript, b []byte) {
	c.out.Lock()
	defer c.out.Unlock()
	if t != nil {
		t.Write(b)
	}
}

// A type the package does convert to the interface is still a candidate.
type sink struct {
	mu sync.Mutex
	st *state
}

type state struct {
	mu sync.Mutex
}

type writer interface {
	Write([]byte) (int, error)
}

func (s *sink) Write(b []byte) (int, error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return len(b), nil
}

func newWriter(s *sink) writer { return s }

func (st *state) flush(w writer) {
	st.mu.Lock()
	defer st.mu.Unlock()
	w.Write(nil)
}

func (s *sink) drain() {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.mu.Lock()
	s.mu.Unlock()
}

func (s *sink) push(w writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Write(nil) // want `lock order inversion: state.mu then sink.mu in sink.drain .* but sink.mu then state.mu in sink.push \(accidentiface.go:\d+ -> accidentiface.go:\d+ via sink.Write\)`
}
