// Project: upper/db (upper.io/db.v3, data access layer for PostgreSQL, MySQL,
// SQLite, CockroachDB...), v3.5, 2018.
// Files: internal/sqladapter/database.go (database.Name, database.Context,
// NewBaseDatabase), lib/sqlbuilder/select.go (selector.Iterator),
// lib/sqlbuilder/builder.go (sqlBuilder, exprDB), postgresql/database.go
// (database.LookupName, the PartialDatabase the adapter plugs in).
// PR: upper/db#460 "Fix deadlock in sqladapter" (Aug 2018).
//
// sqladapter's database embeds the adapter's PartialDatabase and guards its
// name and context with one mutex, d.mu. Name() locks d.mu and, on first use,
// asks the adapter for the name through PartialDatabase.LookupName. The
// PostgreSQL adapter answers with an ordinary query built by its own SQL
// builder: Select(CURRENT_DATABASE()).Iterator(). The selector's Iterator runs
// the statement on the builder's session, which is the very sqladapter
// database, and first asks it for sess.Context(), which locks d.mu again. The
// same goroutine waits on the mutex it holds, so the first call to Name()
// (made while opening a session or logging it) hangs forever. The fix looks
// the name up under a sync.Once instead of d.mu, so Context() no longer
// contends with the lookup.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Rows is a one-column result set standing in for *sql.Rows.
type Rows struct {
	values []string
	pos    int
}

func (r *Rows) Next() bool { r.pos++; return r.pos <= len(r.values) }

func (r *Rows) Scan(dest ...interface{}) error {
	p, ok := dest[0].(*string)
	if !ok {
		return errors.New("unsupported scan target")
	}
	*p = r.values[r.pos-1]
	return nil
}

// ---- lib/sqlbuilder ----

// exprDB is the session interface the builder executes statements on.
type exprDB interface {
	StatementQuery(ctx context.Context, stmt string, args ...interface{}) (*Rows, error)
	Context() context.Context
}

type sqlBuilder struct{ sess exprDB }

type SQLBuilder interface {
	Select(columns ...interface{}) Selector
}

type Selector interface{ Iterator() Iterator }

type Iterator interface {
	Next(dest ...interface{}) bool
	Scan(dest ...interface{}) error
	Err() error
	Close() error
}

type raw struct{ value string } // db.Raw

func Raw(s string) raw { return raw{s} }

type selector struct {
	builder   *sqlBuilder
	columns   []string
	arguments []interface{}
}

func (b *sqlBuilder) Select(columns ...interface{}) Selector {
	sel := &selector{builder: b}
	for _, c := range columns {
		if r, ok := c.(raw); ok {
			sel.columns = append(sel.columns, r.value)
		}
	}
	return sel
}

func (sel *selector) SQLBuilder() *sqlBuilder { return sel.builder }

func (sel *selector) statement() string { return "SELECT " + strings.Join(sel.columns, ", ") }

func (sel *selector) Iterator() Iterator {
	sess := sel.SQLBuilder().sess
	rows, err := sess.StatementQuery(sess.Context(), sel.statement(), sel.arguments...)
	return &iterator{sess, rows, err}
}

type iterator struct {
	sess   exprDB
	cursor *Rows
	err    error
}

func (it *iterator) Next(dest ...interface{}) bool { return it.err == nil && it.cursor.Next() }

func (it *iterator) Scan(dest ...interface{}) error { return it.cursor.Scan(dest...) }
func (it *iterator) Err() error                     { return it.err }
func (it *iterator) Close() error                   { return nil }

// ---- internal/sqladapter ----

// PartialDatabase defines methods to be implemented by SQL database adapters.
type PartialDatabase interface {
	SQLBuilder
	LookupName() (string, error)
}

// BaseDatabase provides logic for methods that can be shared across all SQL adapters.
type BaseDatabase interface {
	Name() string
	Context() context.Context
	StatementQuery(ctx context.Context, stmt string, args ...interface{}) (*Rows, error)
}

type database struct {
	PartialDatabase
	mu   sync.Mutex
	name string
	ctx  context.Context
}

// NewBaseDatabase provides a BaseDatabase given a PartialDatabase
func NewBaseDatabase(p PartialDatabase) BaseDatabase {
	return &database{PartialDatabase: p}
}

// Name returns the database named
func (d *database) Name() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.name == "" {
		d.name, _ = d.PartialDatabase.LookupName()
	}
	return d.name
}

// Context returns the default context the session is using.
func (d *database) Context() context.Context {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx == nil {
		return context.Background()
	}
	return d.ctx
}

// StatementQuery compiles and executes a statement that returns rows (here:
// the server answers the CURRENT_DATABASE() query).
func (d *database) StatementQuery(ctx context.Context, stmt string, args ...interface{}) (*Rows, error) {
	return &Rows{values: []string{"booktown"}}, nil
}

// ---- postgresql adapter ----

type pgDatabase struct {
	BaseDatabase
	SQLBuilder
}

// LookupName looks for the name of the database and it's often used as a
// test to determine if the connection settings are valid.
func (d *pgDatabase) LookupName() (string, error) {
	q := d.Select(Raw("CURRENT_DATABASE() AS name"))
	iter := q.Iterator()
	defer iter.Close()
	if iter.Next() {
		var name string
		err := iter.Scan(&name)
		return name, err
	}
	return "", iter.Err()
}

func newPgSession() *pgDatabase {
	d := &pgDatabase{}
	d.BaseDatabase = NewBaseDatabase(d)
	d.SQLBuilder = &sqlBuilder{sess: d.BaseDatabase}
	return d
}

func main() {
	sess := newPgSession() // postgresql.Open(settings)
	fmt.Printf("connected to %q\n", sess.Name())
}
