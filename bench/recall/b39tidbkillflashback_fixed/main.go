// pingcap/tidb, server/server.go (Server.KillNonFlashbackClusterConn,
// Server.Kill, killConn) and server/conn.go (clientConn.Close), reached from
// the FLASHBACK CLUSTER DDL job through the util.SessionManager interface.
// Reported as pingcap/tidb#38862, fixed by PR #38872 "server: fix deadlock
// when call killNonFlashbackConn".
//
// Before flashing back, the DDL job kills every connection that is not
// running the FLASHBACK statement: KillNonFlashbackClusterConn read-locks
// s.rwlock (line 109) for the walk over s.clients and calls s.Kill for each
// victim, and Kill read-locks s.rwlock again (line 93). Killing the first
// connection makes its goroutine leave its dispatch loop and close the
// connection, and clientConn.Close asks for s.rwlock's write lock (line 145)
// to drop itself from s.clients. With that writer queued, the RLock in the
// next Kill call waits behind it, while the writer waits for the walk's read
// lock: the flashback job, every closing connection and every new connection
// hang. The fix collects the connection IDs under the read lock, releases it,
// and only then calls Kill.
//
// FIXED TWIN: same program with the project's fix applied; the line numbers
// above refer to the unfixed probe in ../b39tidbkillflashback/main.go.
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

const (
	connStatusDispatching int32 = iota
	connStatusWaitShutdown
)

// ast / planner stand-ins.
type StmtNode interface{}
type FlashBackToTimestampStmt struct{}
type SelectStmt struct{}
type DDL struct{ Statement StmtNode }

type StatementContext struct{ plan interface{} }

func (sc *StatementContext) GetPlan() interface{} { return sc.plan }

type ProcessInfo struct {
	ID      uint64
	StmtCtx *StatementContext
}

// Session is the part of session.Session the server uses here.
type Session interface {
	ShowProcess() *ProcessInfo
}

type session struct{ pi *ProcessInfo }

func (s *session) ShowProcess() *ProcessInfo { return s.pi }

type TiDBContext struct{ Session Session }

type clientConn struct {
	connectionID uint64
	server       *Server
	ctx          *TiDBContext
	status       int32
	mu           struct {
		sync.RWMutex
		cancelFunc context.CancelFunc
	}
}

// SessionManager is util.SessionManager, implemented by *Server.
type SessionManager interface {
	Kill(connectionID uint64, query bool)
	KillNonFlashbackClusterConn()
}

type Server struct {
	rwlock  sync.RWMutex
	clients map[uint64]*clientConn
}

// bgLogInfo stands in for logutil.BgLogger().Info (a synchronous log write).
func bgLogInfo(msg string, connID uint64) {
	time.Sleep(20 * time.Millisecond)
	_ = msg
	_ = connID
}

// Kill implements the SessionManager interface.
func (s *Server) Kill(connectionID uint64, query bool) {
	bgLogInfo("kill", connectionID)

	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	conn, ok := s.clients[connectionID]
	if !ok {
		return
	}
	if !query {
		// Mark the client connection status as WaitShutdown, when clientConn.Run detect
		// this, it will end the dispatch loop and exit.
		atomic.StoreInt32(&conn.status, connStatusWaitShutdown)
	}
	killConn(conn)
}

// KillNonFlashbackClusterConn implements SessionManager interface.
func (s *Server) KillNonFlashbackClusterConn() {
	s.rwlock.RLock()
	ids := make([]uint64, 0, len(s.clients))
	for id := range s.clients {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	connIDs := make([]uint64, 0, len(s.clients))
	for _, id := range ids {
		client := s.clients[id]
		if client.ctx.Session != nil {
			processInfo := client.ctx.Session.ShowProcess()
			ddl, ok := processInfo.StmtCtx.GetPlan().(*DDL)
			if !ok {
				connIDs = append(connIDs, client.connectionID)
				continue
			}
			_, ok = ddl.Statement.(*FlashBackToTimestampStmt)
			if !ok {
				connIDs = append(connIDs, client.connectionID)
				continue
			}
		}
	}
	s.rwlock.RUnlock()
	for _, id := range connIDs {
		s.Kill(id, false)
	}
}

func killConn(conn *clientConn) {
	conn.mu.RLock()
	cancelFunc := conn.mu.cancelFunc
	conn.mu.RUnlock()
	if cancelFunc != nil {
		cancelFunc()
	}
}

// Close closes the connection and removes it from the server.
func (cc *clientConn) Close() error {
	cc.server.rwlock.Lock()
	delete(cc.server.clients, cc.connectionID)
	cc.server.rwlock.Unlock()
	return nil
}

// Run reads client queries until the connection is killed.
func (cc *clientConn) Run(ctx context.Context) {
	<-ctx.Done() // readPacket fails once killConn cancels the connection
	if atomic.LoadInt32(&cc.status) == connStatusWaitShutdown {
		_ = cc.Close()
	}
}

func (s *Server) onConn(id uint64, plan interface{}, wg *sync.WaitGroup) {
	ctx, cancel := context.WithCancel(context.Background())
	conn := &clientConn{connectionID: id, server: s,
		ctx: &TiDBContext{Session: &session{pi: &ProcessInfo{ID: id, StmtCtx: &StatementContext{plan: plan}}}}}
	conn.mu.cancelFunc = cancel
	s.rwlock.Lock()
	s.clients[id] = conn
	s.rwlock.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn.Run(ctx)
	}()
}

func main() {
	s := &Server{clients: map[uint64]*clientConn{}}
	var conns sync.WaitGroup
	s.onConn(1, &DDL{Statement: &FlashBackToTimestampStmt{}}, &conns) // the FLASHBACK CLUSTER session
	s.onConn(2, &SelectStmt{}, &conns)
	s.onConn(3, &SelectStmt{}, &conns)

	// The flashback DDL job, through infosync's SessionManager.
	var sm SessionManager = s
	done := make(chan struct{})
	go func() {
		sm.KillNonFlashbackClusterConn()
		close(done)
	}()
	<-done
	s.Kill(1, false) // the flashback finished; let the last session go
	conns.Wait()
	fmt.Println("remaining connections:", len(s.clients))
}
