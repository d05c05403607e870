// Project: gorm.io/gorm (prepare_stmt.go, PrepareStmt mode)
// Bug: PreparedStmtDB.prepare held db.Mux (write lock) across conn.PrepareContext.
// With MaxOpenConns=1, g1 begins a transaction (owns the only connection) and g2
// queries outside it: g2 takes Mux and waits inside PrepareContext for a free
// connection, while g1's next statement in the tx needs Mux to prepare, so the tx
// never commits and the pool never frees the connection.
// Fix: cache a placeholder Stmt (with a `prepared` channel) under Mux, release Mux,
// and call conn.PrepareContext without holding it.

package b20gormprepare_fixed

import (
	"context"
	"sync"
	"testing"
	"time"
)

// sqlDB models database/sql.DB with SetMaxOpenConns(n).
type sqlDB struct {
	slots chan struct{}
}

func openDB(maxOpen int) *sqlDB { return &sqlDB{slots: make(chan struct{}, maxOpen)} }

func (db *sqlDB) conn(ctx context.Context) error {
	select {
	case db.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (db *sqlDB) release() { <-db.slots }

type sqlStmt struct{ query string }

type ConnPool interface {
	PrepareContext(ctx context.Context, query string) (*sqlStmt, error)
}

func (db *sqlDB) PrepareContext(ctx context.Context, query string) (*sqlStmt, error) {
	if err := db.conn(ctx); err != nil {
		return nil, err
	}
	defer db.release()
	return &sqlStmt{query: query}, nil
}

func (db *sqlDB) BeginTx(ctx context.Context) (*sqlTx, error) {
	if err := db.conn(ctx); err != nil {
		return nil, err
	}
	return &sqlTx{db: db}, nil
}

type sqlTx struct{ db *sqlDB }

func (tx *sqlTx) PrepareContext(ctx context.Context, query string) (*sqlStmt, error) {
	return &sqlStmt{query: query}, nil // runs on the tx's own connection
}

func (tx *sqlTx) Commit() error { tx.db.release(); return nil }

type Stmt struct {
	*sqlStmt
	Transaction bool
	prepared    chan struct{}
	prepareErr  error
}

type PreparedStmtDB struct {
	Stmts       map[string]*Stmt
	PreparedSQL []string
	Mux         *sync.RWMutex
	ConnPool
}

func (db *PreparedStmtDB) prepare(ctx context.Context, conn ConnPool, isTransaction bool, query string) (Stmt, error) {
	db.Mux.RLock()
	if stmt, ok := db.Stmts[query]; ok && (!stmt.Transaction || isTransaction) {
		db.Mux.RUnlock()
		// wait for other goroutines prepared
		<-stmt.prepared
		if stmt.prepareErr != nil {
			return Stmt{}, stmt.prepareErr
		}
		return *stmt, nil
	}
	db.Mux.RUnlock()

	db.Mux.Lock()
	// double check
	if stmt, ok := db.Stmts[query]; ok && (!stmt.Transaction || isTransaction) {
		db.Mux.Unlock()
		<-stmt.prepared
		if stmt.prepareErr != nil {
			return Stmt{}, stmt.prepareErr
		}
		return *stmt, nil
	}
	// cache preparing stmt first
	cacheStmt := Stmt{Transaction: isTransaction, prepared: make(chan struct{})}
	db.Stmts[query] = &cacheStmt
	db.Mux.Unlock()

	// prepare completed
	defer close(cacheStmt.prepared)

	// Reason why cannot lock conn.PrepareContext: with maxOpen == 1 a tx may own
	// the only connection and need Mux to prepare its next statement.
	stmt, err := conn.PrepareContext(ctx, query)
	if err != nil {
		cacheStmt.prepareErr = err
		db.Mux.Lock()
		delete(db.Stmts, query)
		db.Mux.Unlock()
		return Stmt{}, err
	}

	db.Mux.Lock()
	cacheStmt.sqlStmt = stmt
	db.PreparedSQL = append(db.PreparedSQL, query)
	db.Mux.Unlock()
	return cacheStmt, nil
}

func (db *PreparedStmtDB) QueryContext(ctx context.Context, query string) (*sqlStmt, error) {
	stmt, err := db.prepare(ctx, db.ConnPool, false, query)
	if err != nil {
		return nil, err
	}
	return stmt.sqlStmt, nil
}

type PreparedStmtTX struct {
	Tx             *sqlTx
	PreparedStmtDB *PreparedStmtDB
}

func (tx *PreparedStmtTX) ExecContext(ctx context.Context, query string) error {
	_, err := tx.PreparedStmtDB.prepare(ctx, tx.Tx, true, query)
	return err
}

func (tx *PreparedStmtTX) Commit() error { return tx.Tx.Commit() }

func TestPrepareStmtMaxOpenConnsOne(t *testing.T) {
	sqldb := openDB(1)
	pdb := &PreparedStmtDB{Stmts: map[string]*Stmt{}, Mux: &sync.RWMutex{}, ConnPool: sqldb}
	ctx := context.Background()

	var wg sync.WaitGroup
	wg.Add(2)
	began := make(chan struct{})
	go func() { // g1: db.Transaction(func(tx) { tx.Create(&user) })
		defer wg.Done()
		sqlTx, err := sqldb.BeginTx(ctx)
		if err != nil {
			return
		}
		tx := &PreparedStmtTX{Tx: sqlTx, PreparedStmtDB: pdb}
		close(began)
		time.Sleep(100 * time.Millisecond) // building the INSERT
		if err := tx.ExecContext(ctx, "INSERT INTO `users` (`name`) VALUES (?)"); err == nil {
			_ = tx.Commit()
		}
	}()
	<-began
	go func() { // g2: db.First(&user)
		defer wg.Done()
		_, _ = pdb.QueryContext(ctx, "SELECT * FROM `users` ORDER BY `users`.`id` LIMIT 1")
	}()
	wg.Wait()
}
