// Package lib keeps what it is given in different ways: inside the
// receiver, inside a new object it returns, or where other code finds it.
package lib

// Handler is told of events.
type Handler interface{ Event() }

// Options keeps its handler in itself only.
type Options struct{ h Handler }

// Init stores h into o: h is kept exactly as long as o.
func (o *Options) Init(h Handler) { o.h = h }

// Job runs fn when scheduled; NewJob only builds it.
type Job struct{ fn func() }

// NewJob returns a job holding fn.
func NewJob(fn func()) *Job { return &Job{fn: fn} }

// Registry hands its handlers to whoever asks.
type Registry struct{ hs []Handler }

// Register stores h into r, which other code reaches.
func (r *Registry) Register(h Handler) { r.hs = append(r.hs, h) }

var kept []Handler

// Keep stores h where any goroutine may call it.
func Keep(h Handler) { kept = append(kept, h) }
