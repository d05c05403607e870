// Project: cockroachdb/cockroach (pkg/sql/conn_executor.go, closed_session_cache.go), v22.1/v22.2, June 2022 (issue #83078, fix PR approximate).
// Bug: txnStateTransitionsApplyWrapper locks ex.mu around ex.machine.ApplyWithPayload without a defer, so a panic
// raised while finishing the transaction leaves ex.mu write-locked; the connection's deferred closeWrapper then
// closes the executor, and close adds the session to the closed session cache via ex.serialize(), which RLocks ex.mu.
package b95crdbconnexecpanicfixed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

type ClusterWideID string

// serverpb.Session, reduced.
type Session struct {
	ID            ClusterWideID
	ActiveQueries []string
	LastStatement string
}

// ClosedSessionCache keeps recently closed sessions for the ListSessions status endpoint.
type ClosedSessionCache struct {
	mu   sync.Mutex
	data map[ClusterWideID]Session
}

func (c *ClosedSessionCache) add(id ClusterWideID, s Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.data[id] = s
}

type ExecutorConfig struct{ ClosedSessionCache *ClosedSessionCache }

type Server struct{ cfg *ExecutorConfig }

type fsmEvent interface{ event() }
type eventTxnFinishCommitted struct{}

func (eventTxnFinishCommitted) event() {}

// txnState's finish path stops the txn memory monitor, which panics on leaked bytes.
type txnState struct{ leakedBytes int64 }

func (ts *txnState) finishSQLTxn() {
	if ts.leakedBytes != 0 {
		panic(fmt.Sprintf("txn: unexpected %d leftover bytes", ts.leakedBytes))
	}
}

// fsm.Machine, reduced to the transition that finishes the transaction.
type Machine struct{ ts *txnState }

func (m *Machine) ApplyWithPayload(ctx context.Context, ev fsmEvent, payload interface{}) error {
	switch ev.(type) {
	case eventTxnFinishCommitted:
		m.ts.finishSQLTxn()
		return nil
	}
	return errors.New("unexpected event")
}

type connExecutor struct {
	server    *Server
	sessionID ClusterWideID
	machine   Machine
	curStmt   string

	mu struct {
		sync.RWMutex
		// ActiveQueries contains all queries in flight.
		ActiveQueries map[string]string
	}
}

func (ex *connExecutor) txnStateTransitionsApplyWrapper(ev fsmEvent, payload interface{}) error {
	// Transition the transaction state. The lock is released with a defer so a
	// panic in the state machine does not leave ex.mu locked.
	err := func() error {
		ex.mu.Lock()
		defer ex.mu.Unlock()
		return ex.machine.ApplyWithPayload(context.Background(), ev, payload)
	}()
	return err
}

func (ex *connExecutor) execStmt(stmt string) error {
	ex.curStmt = stmt
	ex.mu.Lock()
	ex.mu.ActiveQueries["q1"] = stmt
	ex.mu.Unlock()
	return ex.txnStateTransitionsApplyWrapper(eventTxnFinishCommitted{}, nil)
}

// serialize returns the session's state for the status server.
func (ex *connExecutor) serialize() Session {
	ex.mu.RLock()
	defer ex.mu.RUnlock()
	s := Session{ID: ex.sessionID, LastStatement: ex.curStmt}
	for _, q := range ex.mu.ActiveQueries {
		s.ActiveQueries = append(s.ActiveQueries, q)
	}
	return s
}

type closeType int

const (
	normalClose closeType = iota
	panicClose
)

func (ex *connExecutor) close(ctx context.Context, ct closeType) {
	ex.server.cfg.ClosedSessionCache.add(ex.sessionID, ex.serialize())
}

// closeWrapper closes the executor and re-raises a panic recovered from the connection loop.
func (ex *connExecutor) closeWrapper(ctx context.Context, recovered interface{}) {
	if recovered != nil {
		// Close the executor before propagating the panic further.
		ex.close(ctx, panicClose)
		panic(recovered)
	}
	ex.close(ctx, normalClose)
}

// ServeConn runs the connection's statements, as pgwire's conn.serveImpl does.
func (s *Server) ServeConn(ex *connExecutor, stmts []string) (err error) {
	defer func() {
		r := recover()
		ex.closeWrapper(context.Background(), r)
	}()
	for _, stmt := range stmts {
		if err := ex.execStmt(stmt); err != nil {
			return err
		}
	}
	return nil
}

func TestB95crdbconnexecpanicFixed(t *testing.T) {
	srv := &Server{cfg: &ExecutorConfig{ClosedSessionCache: &ClosedSessionCache{data: map[ClusterWideID]Session{}}}}
	ex := &connExecutor{server: srv, sessionID: "s1", machine: Machine{ts: &txnState{leakedBytes: 10240}}}
	ex.mu.ActiveQueries = map[string]string{}

	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Errorf("expected the txn finish panic to propagate")
			}
		}()
		_ = srv.ServeConn(ex, []string{"COMMIT"})
	}()
	if _, ok := srv.cfg.ClosedSessionCache.data["s1"]; !ok {
		t.Fatalf("closed session was not recorded")
	}
}
