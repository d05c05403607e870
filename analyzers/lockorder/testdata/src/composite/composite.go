// Package composite: a lock held across a wait is reported only when the
// goroutine that would end the wait surely takes that lock; one it may
// reach only through an interface with several implementations (a mixer
// calling its sources, one of which has the mixer's type) takes another
// object's lock.
package composite

import "sync"

// Source is implemented by several types, Mixer among them.
type Source interface {
	Next() bool
	Close()
}

type slice struct{ n int }

func FromSlice(n int) Source { return &slice{n: n} }

func (s *slice) Next() bool { s.n--; return s.n > 0 }
func (s *slice) Close()     { s.n = 0 }

// Mixer reads its sources on goroutines; Close waits for them under mu.
// A source may itself be a Mixer, whose Next takes its own mu: another
// object. Silent.
type Mixer struct {
	mu      sync.Mutex
	wg      sync.WaitGroup
	sources []Source
	last    int
}

func (m *Mixer) Add(s Source) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sources = append(m.sources, s)
	m.wg.Add(1)
	go m.run(s)
}

func (m *Mixer) run(s Source) {
	defer m.wg.Done()
	for s.Next() {
	}
}

func (m *Mixer) Next() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last++
	return len(m.sources) > 0
}

func (m *Mixer) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.sources {
		s.Close()
	}
	m.wg.Wait()
}

// Pool's workers take the pool's own lock through a direct call: Close
// waiting for them under it never returns.
type Pool struct {
	mu   sync.Mutex
	wg   sync.WaitGroup
	done int
}

func (p *Pool) Start() {
	p.wg.Add(1)
	go p.work()
}

func (p *Pool) work() {
	defer p.wg.Done()
	p.finish()
}

func (p *Pool) finish() {
	p.mu.Lock()
	p.done++
	p.mu.Unlock()
}

func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wg.Wait() // want `Pool.mu \(taken at composite.go:\d+\) is held across a WaitGroup.Wait; the goroutine started by the go statement, which would unblock it, also takes Pool.mu \[blocking-held\]`
}

// Notifier is implemented by Server alone: the call is exact, and the
// server registered as its own notifier takes its own lock.
type Notifier interface{ Notify() }

type Server struct {
	mu     sync.Mutex
	wg     sync.WaitGroup
	notify Notifier
	count  int
}

func NewServer() *Server {
	s := &Server{}
	s.notify = s
	return s
}

func (s *Server) Notify() {
	s.mu.Lock()
	s.count++
	s.mu.Unlock()
}

func (s *Server) Start() {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.notify.Notify()
	}()
}

func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wg.Wait() // want `Server.mu \(taken at composite.go:\d+\) is held across a WaitGroup.Wait; the goroutine started by the go statement, which would unblock it, also takes Server.mu \[blocking-held\]`
}
