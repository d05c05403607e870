// Package paramflows: what exported functions do with their parameters,
// the ParamFlows fact (no fact when every parameter escapes).
package paramflows

type Handler interface{ Event() }

type Options struct {
	h Handler
	n int
}

// Init keeps h inside o only.
func (o *Options) Init(h Handler) { o.h = h } // want Init:"flows\\(stays, into 0\\)"

// Size reads o and keeps nothing.
func (o *Options) Size(n int) int { return o.n + n } // want Size:"flows\\(stays, escapes\\)"

// Wrap returns a new object holding h: returning is not keeping.
func Wrap(h Handler) *Options { return &Options{h: h} } // want Wrap:"flows\\(stays\\)"

var kept []Handler

// Keep stores h where any goroutine finds it: no fact.
func Keep(h Handler) { kept = append(kept, h) }

// Run hands h to a goroutine: no fact.
func Run(h Handler) { go h.Event() }

var options []*Options

// mix keeps h inside a, and hands a to everyone.
func mix(a *Options, h Handler) {
	a.h = h
	options = append(options, a)
}

// Mixed: a escapes through mix; h, stored into a at the same call, is
// counted as escaping too (a call that lets one argument escape publishes
// all it is given), so there is no fact. Whatever the order the two are
// classified in, a is never taken to stay because h went into it.
func Mixed(a *Options, h Handler) { mix(a, h) }
