// Project: go-gorm/gorm (prepare_stmt.go)
// Bug: PreparedStmtDB.prepare took db.Mux.Lock() on a cache miss and kept it while calling
// conn.PrepareContext on the size-limited *sql.DB pool. The goroutine owning the last pool
// connection is inside a transaction whose next Exec calls prepare -> db.Mux.RLock(), so
// neither side can proceed (issue #4419, PrepareStmt + default transactions).
// Upstream fix: PR #5568 "fix: prepare deadlock": the cache entry is inserted as a
// placeholder (with a "prepared" channel) under the lock, the lock is released before
// PrepareContext, and concurrent users of the same query wait on the channel instead.
// Note: the pool is modelled as a semaphore channel; sql types are simplified stand-ins.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ConnPool is the subset of *sql.DB / *sql.Tx gorm uses.
type ConnPool interface {
	PrepareContext(ctx context.Context, query string) (*Stmt, error)
}

type Stmt struct{ query string }

func (s *Stmt) Exec() error { return nil }

// sqlDB models *sql.DB with SetMaxOpenConns(n): a connection slot is needed to prepare.
type sqlDB struct{ slots chan struct{} }

func newSQLDB(maxOpen int) *sqlDB { return &sqlDB{slots: make(chan struct{}, maxOpen)} }

func (db *sqlDB) acquire() {
	db.slots <- struct{}{} // waits for a free connection
}

func (db *sqlDB) release() { <-db.slots }

func (db *sqlDB) PrepareContext(ctx context.Context, query string) (*Stmt, error) {
	db.acquire()
	defer db.release()
	return &Stmt{query: query}, nil
}

func (db *sqlDB) Begin() *sqlTx {
	db.acquire()
	return &sqlTx{db: db}
}

// sqlTx models *sql.Tx: it owns one connection until Commit.
type sqlTx struct{ db *sqlDB }

func (tx *sqlTx) PrepareContext(ctx context.Context, query string) (*Stmt, error) {
	return &Stmt{query: query}, nil // runs on the tx's own connection
}

func (tx *sqlTx) Commit() { tx.db.release() }

type cachedStmt struct {
	*Stmt
	Transaction bool
	prepared    chan struct{} // closed once Stmt / prepareErr are set
	prepareErr  error
}

// PreparedStmtDB caches prepared statements across the pool.
type PreparedStmtDB struct {
	Stmts       map[string]*cachedStmt
	PreparedSQL []string
	Mux         *sync.RWMutex
	ConnPool    ConnPool
}

func waitPrepared(stmt *cachedStmt) (*cachedStmt, error) {
	<-stmt.prepared // wait outside of Mux
	if stmt.prepareErr != nil {
		return nil, stmt.prepareErr
	}
	return stmt, nil
}

func (db *PreparedStmtDB) prepare(ctx context.Context, conn ConnPool, isTransaction bool, query string) (*cachedStmt, error) {
	db.Mux.RLock()
	if stmt, ok := db.Stmts[query]; ok && (!stmt.Transaction || isTransaction) {
		db.Mux.RUnlock()
		return waitPrepared(stmt)
	}
	db.Mux.RUnlock()

	db.Mux.Lock()
	// double check
	if stmt, ok := db.Stmts[query]; ok && (!stmt.Transaction || isTransaction) {
		db.Mux.Unlock()
		return waitPrepared(stmt)
	}
	// Reserve the entry, then prepare without holding Mux.
	cacheStmt := &cachedStmt{Transaction: isTransaction, prepared: make(chan struct{})}
	db.Stmts[query] = cacheStmt
	db.Mux.Unlock()

	defer close(cacheStmt.prepared)

	stmt, err := conn.PrepareContext(ctx, query)
	if err != nil {
		cacheStmt.prepareErr = err
		db.Mux.Lock()
		delete(db.Stmts, query)
		db.Mux.Unlock()
		return nil, err
	}

	db.Mux.Lock()
	cacheStmt.Stmt = stmt
	db.PreparedSQL = append(db.PreparedSQL, query)
	db.Mux.Unlock()
	return cacheStmt, nil
}

func (db *PreparedStmtDB) ExecContext(ctx context.Context, query string) error {
	stmt, err := db.prepare(ctx, db.ConnPool, false, query)
	if err != nil {
		return err
	}
	return stmt.Exec()
}

// PreparedStmtTX is used by gorm's default transaction around Create/Update.
type PreparedStmtTX struct {
	Tx             *sqlTx
	PreparedStmtDB *PreparedStmtDB
}

func (tx *PreparedStmtTX) ExecContext(ctx context.Context, query string) error {
	stmt, err := tx.PreparedStmtDB.prepare(ctx, tx.Tx, true, query)
	if err != nil {
		return err
	}
	return stmt.Exec()
}

func main() {
	pool := newSQLDB(1) // db.SetMaxOpenConns(1)
	pdb := &PreparedStmtDB{Stmts: map[string]*cachedStmt{}, Mux: &sync.RWMutex{}, ConnPool: pool}
	ctx := context.Background()

	var wg sync.WaitGroup
	inTx := make(chan struct{})
	wg.Add(2)
	go func() { // db.Create(&user) with SkipDefaultTransaction=false
		defer wg.Done()
		tx := &PreparedStmtTX{Tx: pool.Begin(), PreparedStmtDB: pdb}
		close(inTx)
		time.Sleep(10 * time.Millisecond) // let the query goroutine grab Mux
		_ = tx.ExecContext(ctx, "INSERT INTO users (name) VALUES (?)")
		tx.Tx.Commit()
	}()
	go func() { // db.First(&user) outside any transaction
		defer wg.Done()
		<-inTx
		_ = pdb.ExecContext(ctx, "SELECT * FROM users LIMIT 1")
	}()
	wg.Wait()
	fmt.Println("done:", pdb.PreparedSQL)
}
