// Project: Go standard library database/sql (src/database/sql/sql.go Tx.awaitDone, Tx.rollback, Tx.closePrepared, Tx.grabConn, Stmt.QueryContext, Stmt.connStmt, Stmt.Close), Go 1.14.7 and 1.15, August 2020.
// Bug: CL 216240 made Tx.rollback hold tx.closemu for writing (defer Unlock) for the whole rollback, including closePrepared, which closes every statement prepared on the transaction and so write-locks each Stmt.closemu. A query on a transaction statement read-locks Stmt.closemu first and then read-locks tx.closemu in grabConn, so when the transaction context is cancelled while such a query runs, the awaitDone goroutine and the query deadlock (golang/go#40985, TestTxStmtDeadlock). The fix (CL 250178, exact shape approximate) only takes and releases tx.closemu to wait for active queries and rolls back and closes the statements without holding it.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	ErrTxDone        = errors.New("sql: transaction has already been committed or rolled back")
	driverErrBadConn = errors.New("driver: bad connection")
)

// hookStmtQuery is a test hook (like hookTxGrabConn) run after Stmt.closemu is taken.
var hookStmtQuery func()

type fakeTx struct{}
type fakeStmt struct{ query string }

func (*fakeTx) Rollback() error                      { return nil }
func (*fakeStmt) Close() error                       { return nil }
func (*fakeStmt) Query(args []any) ([]string, error) { return []string{"Alice"}, nil }

type DB struct{}
type driverConn struct{ sync.Mutex }

type driverStmt struct {
	sync.Locker // the *driverConn
	si          *fakeStmt
}

func (ds *driverStmt) Close() (err error) {
	withLock(ds, func() { err = ds.si.Close() })
	return err
}

func withLock(lk sync.Locker, fn func()) {
	lk.Lock()
	defer lk.Unlock()
	fn()
}

type Tx struct {
	closemu sync.RWMutex
	dc      *driverConn
	txi     *fakeTx
	done    int32
	cancel  func()
	ctx     context.Context
	stmts   struct {
		sync.Mutex
		v []*Stmt
	}
}

func (db *DB) BeginTx(ctx context.Context) (*Tx, error) {
	ctx, cancel := context.WithCancel(ctx)
	tx := &Tx{dc: &driverConn{}, txi: &fakeTx{}, cancel: cancel, ctx: ctx}
	go tx.awaitDone()
	return tx, nil
}

func (tx *Tx) awaitDone() {
	<-tx.ctx.Done()
	tx.rollback(true) // discard the connection
}

func (tx *Tx) isDone() bool                { return atomic.LoadInt32(&tx.done) != 0 }
func (tx *Tx) closemuRUnlockRelease(error) { tx.closemu.RUnlock() }
func (tx *Tx) Rollback() error             { return tx.rollback(false) }

func (tx *Tx) grabConn(ctx context.Context) (*driverConn, func(error), error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	// closemu.RLock must come before the check for isDone.
	tx.closemu.RLock()
	if tx.isDone() {
		tx.closemu.RUnlock()
		return nil, nil, ErrTxDone
	}
	return tx.dc, tx.closemuRUnlockRelease, nil
}

func (tx *Tx) closePrepared() {
	tx.stmts.Lock()
	defer tx.stmts.Unlock()
	for _, stmt := range tx.stmts.v {
		stmt.Close()
	}
}

func (tx *Tx) rollback(discardConn bool) error {
	if !atomic.CompareAndSwapInt32(&tx.done, 0, 1) {
		return ErrTxDone
	}
	// Cancel the Tx to release any active R-closemu locks. Hold the
	// W-closemu lock prior to rollback to ensure no query is active.
	tx.cancel()
	tx.closemu.Lock()
	defer tx.closemu.Unlock()
	var err error
	withLock(tx.dc, func() { err = tx.txi.Rollback() })
	if err != driverErrBadConn {
		tx.closePrepared()
	}
	if discardConn {
		err = driverErrBadConn
	}
	return err
}

func (tx *Tx) PrepareContext(ctx context.Context, query string) (*Stmt, error) {
	dc, release, err := tx.grabConn(ctx)
	if err != nil {
		return nil, err
	}
	defer release(nil)
	stmt := &Stmt{query: query, cg: tx, cgds: &driverStmt{Locker: dc, si: &fakeStmt{query: query}}}
	tx.stmts.Lock()
	tx.stmts.v = append(tx.stmts.v, stmt)
	tx.stmts.Unlock()
	return stmt, nil
}

// stmtConnGrabber represents a Tx or Conn that hands out its driverConn.
type stmtConnGrabber interface {
	grabConn(context.Context) (*driverConn, func(error), error)
}

type Stmt struct {
	query   string
	closemu sync.RWMutex // held exclusively during close, for read otherwise.
	cg      stmtConnGrabber
	cgds    *driverStmt
	mu      sync.Mutex // protects the rest of the fields
	closed  bool
}

func (s *Stmt) connStmt(ctx context.Context) (*driverConn, func(error), *driverStmt, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, nil, nil, errors.New("sql: statement is closed")
	}
	// In a transaction we always use the connection the stmt was created on.
	s.mu.Unlock()
	dc, releaseConn, err := s.cg.grabConn(ctx) // blocks, waiting for the connection.
	if err != nil {
		return nil, nil, nil, err
	}
	return dc, releaseConn, s.cgds, nil
}

func (s *Stmt) QueryContext(ctx context.Context, args ...any) (rows []string, err error) {
	s.closemu.RLock()
	defer s.closemu.RUnlock()
	if hookStmtQuery != nil {
		hookStmtQuery()
	}
	dc, releaseConn, ds, err := s.connStmt(ctx)
	if err != nil {
		return nil, err
	}
	withLock(dc, func() { rows, err = ds.si.Query(args) })
	releaseConn(err)
	return rows, err
}

func (s *Stmt) Close() error {
	s.closemu.Lock()
	defer s.closemu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	txds := s.cgds
	s.mu.Unlock()
	return txds.Close()
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	tx, _ := (&DB{}).BeginTx(ctx)
	stmt, _ := tx.PrepareContext(context.Background(), "SELECT|people|name|age=?")
	hookStmtQuery = func() {
		cancel() // the request that owns the transaction goes away
		time.Sleep(50 * time.Millisecond)
	}
	rows, err := stmt.QueryContext(context.Background(), 1)
	fmt.Println("query:", rows, err)
	fmt.Println("rollback:", tx.Rollback())
}
