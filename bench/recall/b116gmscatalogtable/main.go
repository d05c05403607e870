// Project: dolthub/go-mysql-server (sql/analyzer/catalog.go, server/handler.go), 2021 (after the DatabaseProvider refactor), as shipped in dolt sql-server until early 2022.
// Bug: Catalog.Table read-locks c.mu and then calls the exported Catalog.Database, which read-locks c.mu again; when a client disconnects, Handler.ConnectionClosed calls Catalog.UnlockTables, which write-locks c.mu, and if that writer queues between the two read locks the analyzing query and the closing connection deadlock, and every later query blocks behind them (fixed when Catalog.Database stopped taking c.mu and left locking to the DatabaseProvider; I believe this is the hang described in DoltHub's "Debugging Deadlocks in Dolt" post of February 2022, PR number not recalled).
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

var ErrTableNotFound = errors.New("table not found")

// Context is the per-query context carrying the session.
type Context struct {
	connID    uint32
	currentDB string
}

func (c *Context) ID() uint32                 { return c.connID }
func (c *Context) GetCurrentDatabase() string { return c.currentDB }

type Table interface{ Name() string }

// Lockable is implemented by tables that support LOCK TABLES.
type Lockable interface {
	Lock(ctx *Context, write bool) error
	Unlock(ctx *Context, id uint32) error
}

type Database interface {
	Name() string
	GetTableInsensitive(ctx *Context, tblName string) (Table, bool, error)
}

type DatabaseProvider interface {
	Database(name string) (Database, error)
}

type memoryTable struct{ name string }

func (t *memoryTable) Name() string                         { return t.name }
func (t *memoryTable) Lock(ctx *Context, write bool) error  { return nil }
func (t *memoryTable) Unlock(ctx *Context, id uint32) error { return nil }

type memoryDatabase struct {
	name   string
	tables map[string]Table
}

func (d *memoryDatabase) Name() string { return d.name }
func (d *memoryDatabase) GetTableInsensitive(ctx *Context, tblName string) (Table, bool, error) {
	t, ok := d.tables[strings.ToLower(tblName)]
	return t, ok, nil
}

type sliceDBProvider struct {
	mu  sync.Mutex
	dbs []Database
}

func (p *sliceDBProvider) Database(name string) (Database, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, db := range p.dbs {
		if strings.EqualFold(db.Name(), name) {
			return db, nil
		}
	}
	return nil, fmt.Errorf("database not found: %s", name)
}

type tableLocks map[string]struct{}
type dbLocks map[string]tableLocks
type sessionLocks map[uint32]dbLocks

type Catalog struct {
	provider DatabaseProvider
	mu       sync.RWMutex
	locks    sessionLocks
}

// resolveHook stands in for the analyzer work between the two lock calls.
var resolveHook = func() {}

// Database returns the database with the given name.
func (c *Catalog) Database(db string) (Database, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.provider.Database(db)
}

// LockTable adds a lock for the given table and session client.
func (c *Catalog) LockTable(ctx *Context, table string) {
	id, db := ctx.ID(), ctx.GetCurrentDatabase()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.locks[id]; !ok {
		c.locks[id] = make(dbLocks)
	}
	if _, ok := c.locks[id][db]; !ok {
		c.locks[id][db] = make(tableLocks)
	}
	c.locks[id][db][table] = struct{}{}
}

// UnlockTables unlocks all tables for which the given session client has a lock.
func (c *Catalog) UnlockTables(ctx *Context, id uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for db, tables := range c.locks[id] {
		database, err := c.provider.Database(db)
		if err != nil {
			return err
		}
		for t := range tables {
			if table, ok, _ := database.GetTableInsensitive(ctx, t); ok {
				if lockable, ok := table.(Lockable); ok {
					_ = lockable.Unlock(ctx, id)
				}
			}
		}
	}
	delete(c.locks, id)
	return nil
}

// Table returns the table in the given database with the given name.
func (c *Catalog) Table(ctx *Context, dbName, tableName string) (Table, Database, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	resolveHook()

	db, err := c.Database(dbName)
	if err != nil {
		return nil, nil, err
	}
	tbl, ok, err := db.GetTableInsensitive(ctx, tableName)
	if err != nil {
		return nil, nil, err
	} else if !ok {
		return nil, nil, ErrTableNotFound
	}
	return tbl, db, nil
}

// Handler is the vitess mysql.Handler of the server.
type Handler struct{ catalog *Catalog }

// ConnectionClosed releases the table locks of a disconnected client.
func (h *Handler) ConnectionClosed(connID uint32) {
	ctx := &Context{connID: connID}
	if err := h.catalog.UnlockTables(ctx, connID); err != nil {
		fmt.Println("unable to unlock tables on session close:", err)
	}
}

func main() {
	db := &memoryDatabase{name: "mydb", tables: map[string]Table{"t1": &memoryTable{name: "t1"}}}
	catalog := &Catalog{provider: &sliceDBProvider{dbs: []Database{db}}, locks: make(sessionLocks)}
	h := &Handler{catalog: catalog}
	catalog.LockTable(&Context{connID: 7, currentDB: "mydb"}, "t1")

	analyzing := make(chan struct{})
	resolveHook = func() {
		close(analyzing)
		time.Sleep(100 * time.Millisecond)
	}

	done := make(chan string, 2)
	go func() { // connection 8: SELECT * FROM t1, resolve_tables rule
		tbl, _, err := catalog.Table(&Context{connID: 8, currentDB: "mydb"}, "mydb", "t1")
		if err != nil {
			done <- err.Error()
			return
		}
		done <- "resolved " + tbl.Name()
	}()
	go func() { // connection 7 goes away while holding LOCK TABLES
		<-analyzing
		h.ConnectionClosed(7)
		done <- "connection 7 closed"
	}()
	fmt.Println(<-done)
	fmt.Println(<-done)
}
