package callbackparam

import "sync"

// Source has two implementations that call their argument under their
// own locks. Which one a Source holds is a guess: the locks a candidate
// holds around the callback give no edge (its own takes still do).
type Source interface{ Each(h func()) }

type memSource struct {
	mu sync.Mutex
	n  int
}

func (m *memSource) Each(h func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h()
}

type diskSource struct {
	mu sync.Mutex
	n  int
}

func (d *diskSource) Each(h func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h()
}

func sources() []Source { return []Source{&memSource{}, &diskSource{}} }

type Sink struct {
	mu  sync.Mutex
	mem *memSource
	n   int
}

func (s *Sink) consume(src Source) {
	src.Each(func() {
		s.mu.Lock()
		s.n++
		s.mu.Unlock()
	})
}

func (s *Sink) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem.mu.Lock()
	s.mem.n = s.n
	s.mem.mu.Unlock()
}
