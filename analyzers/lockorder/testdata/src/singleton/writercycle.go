package main

import (
	"io"
	"sync"
)

// A log sink that runs its subscribers under its lock, one of which
// writes back through an io.Writer field holding the sink: Write calls
// itself through a subscriber, so Write and the subscriber's method are
// one recursive component of the call graph, and the subscriber must be
// summarized first although io.Writer is no interface of the package.

type ringSink struct {
	sync.Mutex
	lines []string
	subs  []*echoSub
}

func (r *ringSink) Write(p []byte) (int, error) {
	r.Lock()
	defer r.Unlock()
	r.lines = append(r.lines, string(p))
	for _, s := range r.subs {
		s.handle(string(p)) // want `ringSink.Mutex locked again by echoSub.handle -> ringSink.Write \(at writercycle.go:\d+\), the same lock: the program makes one ringSink \(at writercycle.go:\d+\), while held since writercycle.go:\d+: self-deadlock \[double-lock\]`
	}
	return len(p), nil
}

type echoSub struct{ out io.Writer }

func (e *echoSub) handle(line string) {
	e.out.Write([]byte("echo: " + line))
}

// The same subscriber shape writing to another sink type, which takes
// no lock. Silent.
type plainSink struct{ n int }

func (p *plainSink) Write(b []byte) (int, error) {
	p.n += len(b)
	return len(b), nil
}

type quietSink struct {
	sync.Mutex
	subs []*plainSub
}

type plainSub struct{ out io.Writer }

func (q *quietSink) Write(p []byte) (int, error) {
	q.Lock()
	defer q.Unlock()
	for _, s := range q.subs {
		s.out.Write(p)
	}
	return len(p), nil
}

func runRingSink() {
	r := &ringSink{}
	r.subs = append(r.subs, &echoSub{out: r})
	r.Write([]byte("x"))
	q := &quietSink{}
	q.subs = append(q.subs, &plainSub{out: &plainSink{}})
	q.Write([]byte("y"))
}
