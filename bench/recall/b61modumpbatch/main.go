// Project: matrixorigin/matrixone (MatrixOne database), main and 3.0 hotfix branch, 2026.
// Files/functions: pkg/vm/engine/disttae/txn.go: Transaction.WriteBatch,
// Transaction.dumpBatch, dumpBatchLocked, dumpInsertBatchLocked, getTable,
// Transaction.UpdateSnapshotWriteOffset; pkg/vm/engine/disttae/engine.go:
// Engine.Database, Engine.loadDatabaseFromStorage, execReadSql;
// pkg/sql/compile/sql_executor.go: sqlExecutor.Exec, txnExecutor.Exec;
// pkg/sql/compile/compile.go: NewCompile.
// Issue: matrixorigin/matrixone#25557 "sync.Mutex reentrant deadlock in disttae
// Transaction causes all subsequent queries to block indefinitely", fixed by
// #25561 (3.0-dev) and #25679 (main).
//
// disttae.Transaction embeds a sync.Mutex. When the workspace grows past
// its limit, WriteBatch dumps it to S3: dumpBatch locks the transaction and
// walks txn.writes; for each insert batch dumpInsertBatchLocked resolves the
// target table through getTable -> Engine.Database. On a catalog-cache miss
// the engine loads the database row from storage by running internal SQL
// (execReadSql) through the SQL executor in the same transaction, and
// NewCompile for that statement advances the workspace's statement boundary
// with UpdateSnapshotWriteOffset, which locks the same Transaction again. The
// goroutine blocks on its own lock and every later statement of the
// transaction queues behind it. The fix keeps internal sub-SQL compiles from
// touching the shared boundary: they read a transient write offset
// (snapshotWriteOffset becomes an atomic) and never lock the transaction.
package main

import (
	"context"
	"fmt"
	"sync"
)

const workspaceThreshold = 4

type Entry struct {
	typ, databaseName, tableName string
	rows                         int
}

// Workspace is the txn client's view of the engine workspace.
type Workspace interface {
	UpdateSnapshotWriteOffset()
	GetSnapshotWriteOffset() int
}

type TxnOperator struct{ ws Workspace }

func (op *TxnOperator) GetWorkspace() Workspace { return op.ws }

// --- pkg/sql/compile ---

type Process struct {
	txnOp                *TxnOperator
	DisableIncrStatement bool
}

type Compile struct {
	sql       string
	proc      *Process
	TxnOffset int
}

func NewCompile(sql string, proc *Process) *Compile {
	c := &Compile{sql: sql, proc: proc}
	if proc.txnOp != nil {
		ws := proc.txnOp.GetWorkspace()
		ws.UpdateSnapshotWriteOffset()
		c.TxnOffset = ws.GetSnapshotWriteOffset()
	}
	return c
}

type SQLExecutor interface {
	Exec(ctx context.Context, sql string, op *TxnOperator, disableIncrStatement bool) ([]string, error)
}

type sqlExecutor struct{}

type txnExecutor struct {
	s   *sqlExecutor
	ctx context.Context
	op  *TxnOperator
}

func (s *sqlExecutor) Exec(ctx context.Context, sql string, op *TxnOperator, disable bool) ([]string, error) {
	return (&txnExecutor{s: s, ctx: ctx, op: op}).Exec(sql, disable)
}

func (exec *txnExecutor) Exec(sql string, disable bool) ([]string, error) {
	c := NewCompile(sql, &Process{txnOp: exec.op, DisableIncrStatement: disable})
	return []string{fmt.Sprint("db1@", c.TxnOffset)}, nil
}

// --- pkg/vm/engine/disttae ---

type Engine struct {
	catalog map[string]bool
	exec    SQLExecutor
}

func execReadSql(ctx context.Context, e *Engine, op *TxnOperator, sql string) ([]string, error) {
	return e.exec.Exec(ctx, sql, op, true)
}

func (e *Engine) loadDatabaseFromStorage(ctx context.Context, name string, op *TxnOperator) error {
	sql := fmt.Sprintf("select datname, dat_id from mo_catalog.mo_database where datname = '%s'", name)
	res, err := execReadSql(ctx, e, op, sql)
	if err == nil && len(res) > 0 {
		e.catalog[name] = true
	}
	return err
}

func (e *Engine) Database(ctx context.Context, dbName string, op *TxnOperator) error {
	if e.catalog[dbName] {
		return nil
	}
	return e.loadDatabaseFromStorage(ctx, dbName, op)
}

type Transaction struct {
	sync.Mutex
	engine              *Engine
	op                  *TxnOperator
	writes              []Entry
	snapshotWriteOffset int
}

func (txn *Transaction) UpdateSnapshotWriteOffset() {
	txn.Lock()
	defer txn.Unlock()
	txn.snapshotWriteOffset = len(txn.writes)
}

func (txn *Transaction) GetSnapshotWriteOffset() int {
	txn.Lock()
	defer txn.Unlock()
	return txn.snapshotWriteOffset
}

func (txn *Transaction) getTable(dbName, tblName string) error {
	return txn.engine.Database(context.Background(), dbName, txn.op)
}

func (txn *Transaction) dumpInsertBatchLocked(offset int, size *int) error {
	for _, w := range txn.writes[offset:] {
		if w.typ != "INSERT" {
			continue
		}
		if err := txn.getTable(w.databaseName, w.tableName); err != nil {
			return err
		}
		*size += w.rows // the batch is written to an S3 object here
	}
	return nil
}

func (txn *Transaction) dumpBatchLocked(offset int) error {
	var size int
	if err := txn.dumpInsertBatchLocked(offset, &size); err != nil {
		return err
	}
	txn.writes = txn.writes[:offset]
	return nil
}

func (txn *Transaction) dumpBatch(offset int) error {
	txn.Lock()
	defer txn.Unlock()
	return txn.dumpBatchLocked(offset)
}

func (txn *Transaction) WriteBatch(db, tbl string, rows int) error {
	txn.Lock()
	txn.writes = append(txn.writes, Entry{typ: "INSERT", databaseName: db, tableName: tbl, rows: rows})
	full := len(txn.writes) >= workspaceThreshold
	txn.Unlock()
	if full {
		return txn.dumpBatch(0)
	}
	return nil
}

func main() {
	e := &Engine{catalog: map[string]bool{}, exec: &sqlExecutor{}}
	txn := &Transaction{engine: e}
	txn.op = &TxnOperator{ws: txn}
	for i := 0; i < workspaceThreshold; i++ {
		_ = txn.WriteBatch("db1", "orders", 8192)
	}
	fmt.Println("insert done, workspace entries:", len(txn.writes))
}
