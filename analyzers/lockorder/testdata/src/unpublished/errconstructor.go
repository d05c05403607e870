package unpublished

import (
	"errors"
	"sync"
)

// A constructor with an error result, `c, err := newSession(cfg)`, makes
// a new object too: its nil on the error path is no object at all. A
// clone that locks the new session's lock under its config's lock
// orders nothing, while a setter takes the two of one session the other
// way. A constructor that registers the session before it returns hands
// out a lock others can hold: that take is an edge.

type sessionConfig struct {
	mu      sync.RWMutex
	timeout int
}

type session struct {
	mu      sync.RWMutex
	cfg     *sessionConfig
	headers map[string]string
}

var errNoConfig = errors.New("no config")

func newSession(cfg *sessionConfig) (*session, error) {
	if cfg == nil {
		return nil, errNoConfig
	}
	return &session{cfg: cfg}, nil
}

func (s *session) setHeaders(h map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.headers = h
}

func (s *session) setTimeout(t int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.mu.Lock()
	defer s.cfg.mu.Unlock()
	s.cfg.timeout = t
}

// clone: sessionConfig.mu, then a new session's mu. Silent.
func (s *session) clone() (*session, error) {
	s.cfg.mu.RLock()
	defer s.cfg.mu.RUnlock()
	c, err := newSession(&sessionConfig{timeout: s.cfg.timeout})
	if err != nil {
		return nil, err
	}
	c.setHeaders(map[string]string{"x": "y"})
	return c, nil
}

type sessionPool struct {
	mu  sync.Mutex
	all []*session
}

func (p *sessionPool) newPooled(cfg *sessionConfig) (*session, error) {
	if cfg == nil {
		return nil, errNoConfig
	}
	s := &session{cfg: cfg}
	p.mu.Lock()
	p.all = append(p.all, s)
	p.mu.Unlock()
	return s, nil
}

// reclone: the pooled session is published before it is returned.
func (p *sessionPool) reclone(s *session) error {
	s.cfg.mu.RLock()
	defer s.cfg.mu.RUnlock()
	c, err := p.newPooled(s.cfg)
	if err != nil {
		return err
	}
	c.setHeaders(nil) // want `lock order inversion: session.mu then sessionConfig.mu in session.setTimeout \(errconstructor.go:\d+ -> errconstructor.go:\d+\) but sessionConfig.mu then session.mu in sessionPool.reclone \(errconstructor.go:\d+ -> errconstructor.go:\d+ via session.setHeaders\) \[lock-order\]`
	return nil
}
