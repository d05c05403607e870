// Package dispatchb implements dispatcha's interfaces. A Session handed to
// a stream as its Owner is called back under the stream's lock, while it
// takes the stream's lock under its own: AB-BA across the two packages.
package dispatchb

import (
	"sync"

	"dispatcha"
)

type Session struct {
	mu      sync.Mutex
	streams map[int]*dispatcha.Stream
}

func (s *Session) Open(id int) *dispatcha.Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := dispatcha.New(id, s, nil)
	s.streams[id] = st
	return st
}

func (s *Session) CloseStream(id int) {
	s.mu.Lock()
	delete(s.streams, id)
	s.mu.Unlock()
}

func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.streams {
		st.ForceClose() // want `lock order inversion: Stream.mu then Session.mu in dispatcha.Stream.Close \(dispatcha.go:32 -> dispatcha.go:35 via Session.CloseStream at dispatchb.go:26\) but Session.mu then Stream.mu in Session.Close \(dispatchb.go:32 -> dispatchb.go:35 via dispatcha.Stream.ForceClose\) \[lock-order\]`
	}
}

// Registry watches streams: the stream calls it after unlocking, so
// holding its lock around the streams' locks is fine.
type Registry struct {
	mu      sync.Mutex
	streams []*dispatcha.Stream
	changed []int
}

func (r *Registry) Watch(id int) *dispatcha.Stream {
	st := dispatcha.New(id, nil, r)
	r.mu.Lock()
	r.streams = append(r.streams, st)
	r.mu.Unlock()
	return st
}

func (r *Registry) Changed(id int) {
	r.mu.Lock()
	r.changed = append(r.changed, id)
	r.mu.Unlock()
}

func (r *Registry) CloseAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, st := range r.streams {
		st.ForceClose()
	}
}

// Detached could be an Owner, but this package never hands one to a
// stream: its lock order is its own business.
type Detached struct {
	mu      sync.Mutex
	streams []*dispatcha.Stream
}

func (d *Detached) CloseStream(id int) {
	d.mu.Lock()
	d.streams = d.streams[:0]
	d.mu.Unlock()
}

func (d *Detached) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, st := range d.streams {
		st.ForceClose()
	}
}

// Declared says it is an Owner, but no value of it is handed to a stream:
// the declaration alone runs nothing under the stream's lock.
type Declared struct {
	mu      sync.Mutex
	streams []*dispatcha.Stream
}

var _ dispatcha.Owner = (*Declared)(nil)

func (d *Declared) CloseStream(id int) {
	d.mu.Lock()
	d.streams = d.streams[:0]
	d.mu.Unlock()
}

func (d *Declared) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, st := range d.streams {
		st.ForceClose()
	}
}

// Audit is called back through Hooked.fire under the stream's lock, and
// takes that lock under its own.
type Audit struct {
	mu      sync.Mutex
	resets  int
	streams []*dispatcha.Hooked
}

func (a *Audit) Track(h *dispatcha.Hooked) {
	h.AddHook(a)
	a.mu.Lock()
	a.streams = append(a.streams, h)
	a.mu.Unlock()
}

func (a *Audit) Reset(id int) {
	a.mu.Lock()
	a.resets++
	a.mu.Unlock()
}

func (a *Audit) CloseAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, h := range a.streams {
		h.ForceClose() // want `lock order inversion: Stream.mu then Audit.mu in dispatcha.Hooked.Reset \(dispatcha.go:63 -> dispatcha.go:66 via Hooked.fire at dispatcha.go:71 -> Audit.Reset at dispatchb.go:129\) but Audit.mu then Stream.mu in Audit.CloseAll \(dispatchb.go:135 -> dispatchb.go:138 via dispatcha.Stream.ForceClose\) \[lock-order\]`
	}
}

// Echo logs through the entry's own logger, whose lock Log holds while
// firing it: a hook that runs deadlocks on its first entry.
type Echo struct{}

func (Echo) Fire(e *dispatcha.Entry) { e.Logger.Log("echo: " + e.Msg) }

// Forward logs to another logger it keeps: not the lock held. Silent.
type Forward struct{ to *dispatcha.Logger }

func (f Forward) Fire(e *dispatcha.Entry) { f.to.Log(e.Msg) }

// Escalate logs through the entry's logger only for some messages: which
// ones Log is called with here is not known. Silent.
type Escalate struct{}

func (Escalate) Fire(e *dispatcha.Entry) {
	if len(e.Msg) > 80 {
		e.Logger.Log("long line")
	}
}

func install(l, audit *dispatcha.Logger) {
	l.AddHook(Echo{}) // want `Logger.mu locked again by Echo.Fire -> dispatcha.Logger.Log \(at dispatcha.go:101\): dispatcha.Logger.Log calls it through dispatcha.LogHook.Fire holding Logger.mu \(dispatcha.go:101 -> dispatcha.go:104, the same lock, reached through the call's arguments\); Echo is handed over as a dispatcha.LogHook here: self-deadlock \[double-lock\]`
	l.AddHook(Forward{to: audit})
	l.AddHook(Escalate{})
}

// A Square handed back to its own package is that package's candidate to
// judge: Measure's type switch never sends it to Area. Silent.
func measureSquare(s *dispatcha.Square) int {
	s.Grow()
	return dispatcha.Measure(s)
}
