// Project: gravitational/teleport (lib/srv/sess.go SessionRegistry.leaveSession, SessionRegistry.ForceTerminate, session.removeParty, session.Close, party.Close), v9.0, March 2022.
// Bug: SessionRegistry.leaveSession holds the registry mutex (deferred unlock) while it removes the leaving party with session.removeParty. With moderated sessions, when the party that leaves is the moderator required by an on_leave terminate policy, removeParty calls SessionRegistry.ForceTerminate, which closes the session; session.Close closes the remaining parties through party.Close, which calls leaveSession again, and finally removes the session from the registry, both of which lock the registry mutex that the goroutine already holds, so the session hangs, its recording is never uploaded and no new session can be opened on the node (issue #11600, fixed by PR #11647 "Fix session leave + termination deadlock", which drops the lock from leaveSession; the exact call chain is reconstructed from the PR description, approximate).
package b113teleportleave

import (
	"fmt"
	"sync"
	"testing"
)

type SessionParticipantMode string

const (
	SessionModeratorMode SessionParticipantMode = "moderator"
	SessionPeerMode      SessionParticipantMode = "peer"
)

type SessionState int

const (
	SessionStatePending SessionState = iota
	SessionStateRunning
	SessionStateTerminated
)

type ID string

// PolicyOptions is the on_leave part of a require_session_join policy.
type PolicyOptions struct{ TerminateOnLeave bool }

type SessionAccessContext struct {
	Username string
	Mode     SessionParticipantMode
}

// SessionAccessEvaluator is auth.SessionAccessEvaluator.
type SessionAccessEvaluator interface {
	FulfilledFor(participants []SessionAccessContext) (bool, PolicyOptions, error)
}

type moderatorRequired struct{ count int }

func (e moderatorRequired) FulfilledFor(participants []SessionAccessContext) (bool, PolicyOptions, error) {
	n := 0
	for _, p := range participants {
		if p.Mode == SessionModeratorMode {
			n++
		}
	}
	return n >= e.count, PolicyOptions{TerminateOnLeave: true}, nil
}

// Channel is the party's ssh.Channel.
type Channel interface {
	Write(p []byte) (int, error)
	Close() error
}

type fakeChannel struct {
	out    []string
	closed bool
}

func (c *fakeChannel) Write(p []byte) (int, error) {
	c.out = append(c.out, string(p))
	return len(p), nil
}
func (c *fakeChannel) Close() error { c.closed = true; return nil }

type ServerContext struct {
	mu      sync.RWMutex
	session *session
}

func (c *ServerContext) getSession() *session {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.session
}

// Emitter is the audit log emitter (events.Emitter).
type Emitter interface{ EmitAuditEvent(event string) }

type memoryEmitter struct{ events []string }

func (e *memoryEmitter) EmitAuditEvent(event string) { e.events = append(e.events, event) }

type SessionRegistry struct {
	sync.Mutex
	sessions map[ID]*session
	emitter  Emitter
}

func (s *SessionRegistry) removeSession(sess *session) {
	s.Lock()
	defer s.Unlock()
	delete(s.sessions, sess.id)
}

func (s *SessionRegistry) emitSessionLeaveEvent(p *party) {
	s.emitter.EmitAuditEvent(fmt.Sprintf("session.leave %s %s", p.user, p.s.id))
}

// leaveSession removes the given party from this session.
func (s *SessionRegistry) leaveSession(party *party) error {
	sess := party.s
	s.Lock()
	defer s.Unlock()

	// Emit session leave event to both the Audit Log as well as over the
	// "x-teleport-event" channel in the SSH connection.
	s.emitSessionLeaveEvent(party)

	// Remove member from in-members representation of party.
	return sess.removeParty(party)
}

// ForceTerminate attempts to close the session.
func (s *SessionRegistry) ForceTerminate(ctx *ServerContext) error {
	sess := ctx.getSession()
	if sess == nil {
		return nil
	}
	sess.BroadcastMessage("Forcefully terminating session...")
	return sess.Close()
}

type party struct {
	id        ID
	user      string
	mode      SessionParticipantMode
	s         *session
	ch        Channel
	closeOnce sync.Once
}

func (p *party) Close() (err error) {
	p.closeOnce.Do(func() {
		if err = p.s.registry.leaveSession(p); err != nil {
			return
		}
		err = p.ch.Close()
	})
	return err
}

type session struct {
	mu       sync.RWMutex
	id       ID
	registry *SessionRegistry
	parties  map[ID]*party
	state    SessionState
	access   SessionAccessEvaluator
	scx      *ServerContext
}

func (s *session) getParties() []*party {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ps []*party
	for _, p := range s.parties {
		ps = append(ps, p)
	}
	return ps
}

func (s *session) BroadcastMessage(format string, args ...any) {
	msg := fmt.Sprintf("Teleport > "+format+"\r\n", args...)
	for _, p := range s.getParties() {
		p.ch.Write([]byte(msg))
	}
}

func (s *session) checkIfStart() (bool, PolicyOptions, error) {
	s.mu.RLock()
	var participants []SessionAccessContext
	for _, p := range s.parties {
		participants = append(participants, SessionAccessContext{Username: p.user, Mode: p.mode})
	}
	s.mu.RUnlock()
	return s.access.FulfilledFor(participants)
}

func (s *session) removeParty(p *party) error {
	s.mu.Lock()
	delete(s.parties, p.id)
	running := s.state == SessionStateRunning
	s.mu.Unlock()

	s.BroadcastMessage("User %v left the session.", p.user)

	canRun, policyOptions, err := s.checkIfStart()
	if err != nil {
		return err
	}
	if !canRun && running {
		if policyOptions.TerminateOnLeave {
			return s.registry.ForceTerminate(s.scx)
		}
		s.mu.Lock()
		s.state = SessionStatePending
		s.mu.Unlock()
	}
	return nil
}

// Close ends the active session and frees all resources.
func (s *session) Close() error {
	s.mu.Lock()
	if s.state == SessionStateTerminated {
		s.mu.Unlock()
		return nil
	}
	s.state = SessionStateTerminated
	s.mu.Unlock()

	s.BroadcastMessage("Closing session...")
	// Remove session parties and close client connections.
	for _, p := range s.getParties() {
		p.Close()
	}
	s.registry.removeSession(s)
	return nil
}

func TestB113teleportleave(t *testing.T) {
	reg := &SessionRegistry{sessions: map[ID]*session{}, emitter: &memoryEmitter{}}
	scx := &ServerContext{}
	sess := &session{id: "0d6f", registry: reg, parties: map[ID]*party{}, state: SessionStateRunning, access: moderatorRequired{count: 1}, scx: scx}
	scx.session = sess
	reg.sessions[sess.id] = sess

	alice := &party{id: "p1", user: "alice", mode: SessionPeerMode, s: sess, ch: &fakeChannel{}}
	bob := &party{id: "p2", user: "bob", mode: SessionModeratorMode, s: sess, ch: &fakeChannel{}}
	sess.parties[alice.id] = alice
	sess.parties[bob.id] = bob

	done := make(chan error)
	go func() {
		// The moderator's connection drops: the SSH server closes the party.
		done <- bob.Close()
	}()
	if err := <-done; err != nil || len(reg.sessions) != 0 {
		t.Fatalf("close: %v, %d sessions left", err, len(reg.sessions))
	}
}
