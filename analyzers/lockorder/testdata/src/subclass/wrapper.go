package subclass

import "sync"

// A mutex type that wraps sync.Mutex to add methods (cockroach's
// syncutil.Mutex) declares one field, its embedded sync.Mutex, for every
// struct that holds one by value: Registry.mu and Span.mu are one class
// refined by the field holding the wrapper, and they order each other as
// two fields of their own would.

type Mutex struct{ sync.Mutex }

func (m *Mutex) AssertHeld() {}

type Registry struct {
	mu struct {
		Mutex
		spans map[int]*Span
	}
}

type Span struct {
	mu struct {
		Mutex
		finished bool
	}
	reg *Registry
}

// Finish: the span's lock, then the registry's.
func (s *Span) Finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.finished = true
	s.reg.remove(s)
}

func (r *Registry) remove(s *Span) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.mu.spans, 0)
}

// VisitSpans: the registry's lock, then each span's.
func (r *Registry) VisitSpans(visit func(bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.mu.spans {
		visit(s.finishedLocked()) // want `lock order inversion: Span.mu.Mutex then Registry.mu.Mutex in Span.Finish .* but Registry.mu.Mutex then Span.mu.Mutex in Registry.VisitSpans`
	}
}

func (s *Span) finishedLocked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.finished
}

// The same wrapper in a consistent order (the registry first, as
// VisitSpans) is silent.
type Tracer struct {
	mu struct {
		Mutex
		active int
	}
	reg *Registry
}

func (t *Tracer) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.active
}

func (t *Tracer) Start() {
	t.reg.mu.Lock()
	defer t.reg.mu.Unlock()
	t.mu.Lock()
	t.mu.active++
	t.mu.Unlock()
}
