// Pattern: a session store built around lock helpers that return their
// release function (`defer s.rlock()()`, `defer s.lock()()`, and an explicit
// `unlock := s.lock(); ...; unlock()` before calling another locking method).
// Read paths hold the read lock and call helpers that must hold mu and never
// lock. The package logger is called under the lock with *Session operands
// whose String() reads only immutable fields.
package ok24sessions

import (
	"fmt"
	"sync"
	"testing"
)

type Logger interface {
	Infof(format string, args ...any)
}

type countingLogger struct {
	mu sync.Mutex
	n  int
}

func (l *countingLogger) Infof(format string, args ...any) {
	_ = fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.n++
	l.mu.Unlock()
}

type Session struct {
	id   string
	user string
	hits int // guarded by Store.mu
}

func (s *Session) String() string { return "session(" + s.id + ", user=" + s.user + ")" }

type Store struct {
	mu       sync.RWMutex
	sessions map[string]*Session
	byUser   map[string][]string
	log      Logger
}

func NewStore(log Logger) *Store {
	return &Store{sessions: map[string]*Session{}, byUser: map[string][]string{}, log: log}
}

func (s *Store) lock() func() {
	s.mu.Lock()
	return s.mu.Unlock
}

func (s *Store) rlock() func() {
	s.mu.RLock()
	return s.mu.RUnlock
}

// getLocked must hold mu.
func (s *Store) getLocked(id string) (*Session, bool) {
	sess, ok := s.sessions[id]
	return sess, ok
}

// userSessionsLocked must hold mu.
func (s *Store) userSessionsLocked(user string) []*Session {
	var out []*Session
	for _, id := range s.byUser[user] {
		if sess, ok := s.getLocked(id); ok {
			out = append(out, sess)
		}
	}
	return out
}

func (s *Store) Create(id, user string) *Session {
	defer s.lock()()
	sess := &Session{id: id, user: user}
	s.sessions[id] = sess
	s.byUser[user] = append(s.byUser[user], id)
	s.log.Infof("created %v", sess)
	return sess
}

func (s *Store) Touch(id string) bool {
	defer s.lock()()
	sess, ok := s.getLocked(id)
	if ok {
		sess.hits++
	}
	return ok
}

func (s *Store) Count(user string) int {
	defer s.rlock()()
	return len(s.userSessionsLocked(user))
}

func (s *Store) Hits(user string) int {
	defer s.rlock()()
	n := 0
	for _, sess := range s.userSessionsLocked(user) {
		n += sess.hits
	}
	return n
}

// Logout removes every session of user and returns how many remain overall.
func (s *Store) Logout(user string) int {
	unlock := s.lock()
	for _, sess := range s.userSessionsLocked(user) {
		delete(s.sessions, sess.id)
		s.log.Infof("logout %s", sess)
	}
	delete(s.byUser, user)
	unlock()
	return s.Len()
}

func (s *Store) Len() int {
	defer s.rlock()()
	return len(s.sessions)
}

func TestProbe(t *testing.T) {
	log := &countingLogger{}
	store := NewStore(log)

	var wg sync.WaitGroup
	for u := 0; u < 4; u++ {
		wg.Add(1)
		go func(u int) {
			defer wg.Done()
			user := fmt.Sprintf("user%d", u)
			for i := 0; i < 5; i++ {
				id := fmt.Sprintf("%s-s%d", user, i)
				store.Create(id, user)
				for j := 0; j < 4; j++ {
					store.Touch(id)
					_ = store.Count(user)
				}
			}
			if h := store.Hits(user); h != 20 {
				t.Errorf("%s hits = %d", user, h)
			}
		}(u)
	}
	wg.Wait()

	if n := store.Len(); n != 20 {
		t.Fatalf("expected 20 sessions, got %d", n)
	}
	if left := store.Logout("user1"); left != 15 {
		t.Fatalf("expected 15 sessions after logout, got %d", left)
	}
	if store.Count("user1") != 0 {
		t.Fatal("user1 still has sessions")
	}
}
