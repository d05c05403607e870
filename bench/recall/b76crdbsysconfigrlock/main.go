// Project: cockroachdb/cockroach (pkg/sql/executor.go, session.go, prepare.go), May 2017.
// Bug: execParsed holds systemConfigCond.L (systemConfigMu.RLocker) for a batch, and PREPARE goes through
// PreparedStatements.New, Executor.Prepare and Session.resetForBatch to getDatabaseCache, which read-locks
// systemConfigMu again, so a gossip updateSystemConfig (Lock) queued in between deadlocks with it (cockroach #16167,
// approximate; fixed by reading databaseCache from an atomic.Value "to avoid recursive locking").
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type SystemConfig struct{ Values map[string]string } // config.SystemConfig

type databaseCache struct {
	// databases is a map from name to descriptor ID.
	databases map[string]int
	// systemConfig holds a copy of the latest system config since the last
	// call to updateSystemConfig.
	systemConfig SystemConfig
}

func newDatabaseCache(cfg SystemConfig) *databaseCache {
	return &databaseCache{databases: map[string]int{"system": 1}, systemConfig: cfg}
}

// ExecutorTestingKnobs is part of the context used to control parts of the system during testing.
type ExecutorTestingKnobs struct {
	// StatementFilter can be used to trap execution of SQL statements.
	StatementFilter func(stmt string)
}

type ExecutorConfig struct{ TestingKnobs ExecutorTestingKnobs }

// An Executor executes SQL statements.
type Executor struct {
	cfg ExecutorConfig

	// System Config and mutex.
	systemConfig     SystemConfig
	databaseCache    *databaseCache
	systemConfigMu   sync.RWMutex
	systemConfigCond *sync.Cond
}

func NewExecutor(cfg ExecutorConfig) *Executor {
	e := &Executor{cfg: cfg}
	e.systemConfigCond = sync.NewCond(e.systemConfigMu.RLocker())
	return e
}

// updateSystemConfig is called whenever the system config gossip entry is updated.
func (e *Executor) updateSystemConfig(cfg SystemConfig) {
	e.systemConfigMu.Lock()
	defer e.systemConfigMu.Unlock()
	e.systemConfig = cfg
	// The database cache gets reset whenever the system config changes.
	e.databaseCache = newDatabaseCache(cfg)
	e.systemConfigCond.Broadcast()
}

// getDatabaseCache returns a database cache with a copy of the latest
// system config.
func (e *Executor) getDatabaseCache() *databaseCache {
	e.systemConfigMu.RLock()
	defer e.systemConfigMu.RUnlock()
	return e.databaseCache
}

type PreparedStatement struct {
	Query string
}

// PreparedStatements is a mapping of PreparedStatement names to their
// corresponding PreparedStatements.
type PreparedStatements struct {
	session *Session
	stmts   map[string]*PreparedStatement
}

// New creates a new PreparedStatement with the provided name and corresponding
// query string, using the given PlaceholderTypes hints to assist in inferring
// placeholder types.
func (ps PreparedStatements) New(e *Executor, name, query string) (*PreparedStatement, error) {
	stmt, err := e.Prepare(query, ps.session)
	if err == nil {
		ps.stmts[name] = stmt
	}
	return stmt, err
}

type txnState struct{ schemaChangersCurGroupNum int }

// Session contains the state of a SQL client connection.
type Session struct {
	Database           string
	PreparedStatements PreparedStatements
	TxnState           txnState
	tables             struct{ databaseCache *databaseCache }
}

func NewSession(database string) *Session {
	s := &Session{Database: database}
	s.PreparedStatements = PreparedStatements{session: s, stmts: map[string]*PreparedStatement{}}
	return s
}

// resetForBatch prepares the Session for executing a new batch of statements.
func (s *Session) resetForBatch(e *Executor) {
	// Update the database cache to a more recent copy, so that we can use tables
	// that we created in previous batches of the same transaction.
	s.tables.databaseCache = e.getDatabaseCache()
	s.TxnState.schemaChangersCurGroupNum++
}

// Prepare returns the result types of the given statement.
func (e *Executor) Prepare(query string, session *Session) (*PreparedStatement, error) {
	session.resetForBatch(e)
	if _, ok := session.tables.databaseCache.databases["system"]; !ok {
		return nil, fmt.Errorf("database cache not initialized")
	}
	return &PreparedStatement{Query: query}, nil
}

// execParsed executes a batch of statements received as a unit from the client.
func (e *Executor) execParsed(session *Session, stmts []string) []string {
	// Hold the system config (read) lock for the batch so all statements
	// see one consistent config, waiting for the first gossip if needed.
	e.systemConfigCond.L.Lock()
	defer e.systemConfigCond.L.Unlock()
	for e.databaseCache == nil {
		e.systemConfigCond.Wait()
	}
	var results []string
	for _, stmt := range stmts {
		results = append(results, e.execStmtInOpenTxn(session, stmt))
		if filter := e.cfg.TestingKnobs.StatementFilter; filter != nil {
			filter(stmt)
		}
	}
	return results
}

func (e *Executor) execStmtInOpenTxn(session *Session, stmt string) string {
	switch {
	case strings.HasPrefix(stmt, "PREPARE "):
		name, query, _ := strings.Cut(strings.TrimPrefix(stmt, "PREPARE "), " AS ")
		if _, err := session.PreparedStatements.New(e, name, query); err != nil {
			return err.Error()
		}
		return "PREPARE"
	default:
		return strings.Fields(stmt)[0]
	}
}

func main() {
	gossipUpdates := make(chan SystemConfig, 1)
	e := NewExecutor(ExecutorConfig{TestingKnobs: ExecutorTestingKnobs{
		StatementFilter: func(stmt string) {
			if strings.HasPrefix(stmt, "CREATE TABLE") {
				// The new descriptor is written; gossip redistributes the
				// system config a moment later.
				gossipUpdates <- SystemConfig{Values: map[string]string{"/Table/51": "kv"}}
				time.Sleep(50 * time.Millisecond)
			}
		},
	}})

	// server.Start: the gossip callback for the system config.
	gossipDone := make(chan struct{})
	go func() {
		defer close(gossipDone)
		for cfg := range gossipUpdates {
			e.updateSystemConfig(cfg)
		}
	}()
	gossipUpdates <- SystemConfig{Values: map[string]string{}}

	session := NewSession("test")
	results := e.execParsed(session, []string{
		"CREATE TABLE kv (k INT PRIMARY KEY, v INT)",
		"PREPARE get AS SELECT v FROM kv WHERE k = $1",
	})
	close(gossipUpdates)
	<-gossipDone
	fmt.Println(results)
}
