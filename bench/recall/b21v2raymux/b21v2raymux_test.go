// Project: v2fly/v2ray-core (common/mux/session.go)
// Bug: SessionManager.Close() holds the manager lock and calls Session.Close()
// on every session, which takes the session lock. A session that finishes on
// its own runs Session.Close() holding its lock and calls back into the parent
// through s.parent.Remove(s.ID), which takes the manager lock: manager -> session
// versus session -> parent manager.
// Fix: SessionManager.Close() no longer calls Session.Close(); it only closes
// each session's input/output links directly and drops the map.

package b21v2raymux

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type TransferType byte

const (
	TransferTypeStream TransferType = 0x01
	TransferTypePacket TransferType = 0x02
)

var errClosedPipe = errors.New("pipe closed")

// pipe is a stand-in for transport/pipe: a buffered link between two workers.
type pipe struct {
	mu     sync.Mutex
	data   [][]byte
	closed bool
}

func (p *pipe) WriteMultiBuffer(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosedPipe
	}
	p.data = append(p.data, b)
	return nil
}

func (p *pipe) Close() error {
	time.Sleep(40 * time.Millisecond) // drain pending writes to the link
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	return nil
}

func (p *pipe) Interrupt() {
	p.mu.Lock()
	p.closed = true
	p.data = nil
	p.mu.Unlock()
}

type Session struct {
	sync.Mutex
	input        *pipe
	output       *pipe
	parent       *SessionManager
	ID           uint16
	transferType TransferType
	closed       bool
}

func (s *Session) Close() error {
	s.Lock()
	defer s.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.output.Close()
	s.input.Interrupt()
	s.parent.Remove(s.ID)
	return nil
}

type SessionManager struct {
	sync.RWMutex
	sessions map[uint16]*Session
	count    uint16
	closed   bool
}

func NewSessionManager() *SessionManager {
	return &SessionManager{sessions: make(map[uint16]*Session, 16)}
}

func (m *SessionManager) Size() int {
	m.RLock()
	defer m.RUnlock()
	return len(m.sessions)
}

func (m *SessionManager) Allocate() *Session {
	m.Lock()
	defer m.Unlock()
	if m.closed {
		return nil
	}
	m.count++
	s := &Session{ID: m.count, parent: m, input: &pipe{}, output: &pipe{}, transferType: TransferTypeStream}
	m.sessions[s.ID] = s
	return s
}

func (m *SessionManager) Remove(id uint16) {
	m.Lock()
	defer m.Unlock()
	if m.closed {
		return
	}
	delete(m.sessions, id)
}

func (m *SessionManager) Get(id uint16) (*Session, bool) {
	m.RLock()
	defer m.RUnlock()
	if m.closed {
		return nil, false
	}
	s, found := m.sessions[id]
	return s, found
}

func (m *SessionManager) Close() error {
	m.Lock()
	defer m.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	for _, s := range m.sessions {
		s.Close()
	}
	m.sessions = nil
	return nil
}

func TestSessionEndsWhileManagerCloses(t *testing.T) {
	m := NewSessionManager()
	s := m.Allocate()
	_ = s.input.WriteMultiBuffer([]byte("GET / HTTP/1.1\r\n"))

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the stream ended: the mux worker closes the session
		defer wg.Done()
		s.Close()
	}()
	go func() { // the underlying connection died: the client worker shuts down
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		m.Close()
	}()
	wg.Wait()
}
