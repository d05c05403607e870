// Project: hashicorp/vault (builtin/logical/database/path_creds_create.go and backend.go, the database secrets backend with external database plugins), v0.9.0/0.9.1, late 2017 (issue #2973, fixed by PR #3761 "CreateUser deadlock fix" in 0.9.2; reconstruction approximate).
// Bug: pathCredsCreateRead holds the backend's embedded RWMutex (read-locked, or write-locked after the upgrade that creates the plugin connection) across the plugin's CreateUser call, and on failure it called closeIfShutdown before releasing it. When the database plugin process has died, CreateUser returns the RPC "connection is shut down" error and closeIfShutdown write-locks the same backend mutex to drop the dead connection, so the request goroutine deadlocks on itself and every later database request queues behind it. The fix releases the lock (unlockFunc) before calling closeIfShutdown.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"
)

// ErrShutdown mirrors net/rpc.ErrShutdown, returned by a plugin client whose
// plugin process has exited.
var ErrShutdown = errors.New("connection is shut down")

type Statements struct{ CreationStatements string }

type UsernameConfig struct{ DisplayName, RoleName string }

// Database is the dbplugin.Database interface implemented by plugin clients.
type Database interface {
	Type() (string, error)
	CreateUser(ctx context.Context, statements Statements, usernameConfig UsernameConfig, expiration time.Time) (string, string, error)
	Close() error
}

// pluginProcess stands in for the go-plugin managed plugin binary.
type pluginProcess struct {
	mu     sync.Mutex
	exited bool
	users  map[string]string
}

// DatabasePluginClient is the RPC client side of an external plugin.
type DatabasePluginClient struct {
	proc   *pluginProcess
	logger *log.Logger
	n      int
}

func (dc *DatabasePluginClient) call(fn func()) error {
	dc.proc.mu.Lock()
	defer dc.proc.mu.Unlock()
	if dc.proc.exited {
		return ErrShutdown
	}
	fn()
	return nil
}

func (dc *DatabasePluginClient) Type() (string, error) { return "postgresql", nil }

func (dc *DatabasePluginClient) CreateUser(ctx context.Context, statements Statements, usernameConfig UsernameConfig, expiration time.Time) (string, string, error) {
	dc.n++
	username := fmt.Sprintf("v-%s-%s-%d", usernameConfig.DisplayName, usernameConfig.RoleName, dc.n)
	err := dc.call(func() { dc.proc.users[username] = statements.CreationStatements })
	if err != nil {
		return "", "", err
	}
	return username, "A1a-pa55w0rd", nil
}

func (dc *DatabasePluginClient) Close() error {
	dc.logger.Printf("[DEBUG] database: closing plugin client")
	return nil
}

type DatabaseConfig struct {
	PluginName   string
	AllowedRoles []string
}

type roleEntry struct {
	DBName     string
	Statements Statements
	DefaultTTL time.Duration
}

type databaseBackend struct {
	connections map[string]Database
	logger      *log.Logger
	configs     map[string]*DatabaseConfig
	roles       map[string]*roleEntry
	// pluginCatalog starts a new plugin process for a plugin name.
	pluginCatalog func(name string) *pluginProcess

	sync.RWMutex
}

// getDBObj returns the database object for name. Caller must hold the lock.
func (b *databaseBackend) getDBObj(name string) (Database, bool) {
	db, ok := b.connections[name]
	return db, ok
}

// createDBObj creates a new plugin client. This must be called with the write lock held.
func (b *databaseBackend) createDBObj(ctx context.Context, name string) (Database, error) {
	if db, ok := b.connections[name]; ok {
		return db, nil
	}
	config, ok := b.configs[name]
	if !ok {
		return nil, fmt.Errorf("no configuration for %q", name)
	}
	db := &DatabasePluginClient{proc: b.pluginCatalog(config.PluginName), logger: b.logger}
	b.connections[name] = db
	return db, nil
}

// clearConnection closes the database connection and removes it from the
// connections map. Must be called with the write lock held.
func (b *databaseBackend) clearConnection(name string) {
	db, ok := b.connections[name]
	if ok {
		db.Close()
		delete(b.connections, name)
	}
}

// closeIfShutdown will check if the error is a RPC Shutdown error and if so,
// close the connection so the next call can reconnect.
func (b *databaseBackend) closeIfShutdown(name string, err error) {
	// Plugin has shutdown, close it so next call can reconnect.
	if err == ErrShutdown {
		b.Lock()
		b.clearConnection(name)
		b.Unlock()
	}
}

func (b *databaseBackend) pathCredsCreateRead(ctx context.Context, name, displayName string) (map[string]interface{}, error) {
	role, ok := b.roles[name]
	if !ok {
		return nil, fmt.Errorf("unknown role: %s", name)
	}

	// Grab the read lock
	b.RLock()
	var unlockFunc func() = b.RUnlock

	// Get the Database object
	db, ok := b.getDBObj(role.DBName)
	if !ok {
		// Upgrade lock
		b.RUnlock()
		b.Lock()
		unlockFunc = b.Unlock

		// Create a new DB object
		var err error
		db, err = b.createDBObj(ctx, role.DBName)
		if err != nil {
			unlockFunc()
			return nil, fmt.Errorf("cound not retrieve db with name: %s, got error: %s", role.DBName, err)
		}
	}

	expiration := time.Now().Add(role.DefaultTTL)
	usernameConfig := UsernameConfig{DisplayName: displayName, RoleName: name}

	// Create the user
	username, password, err := db.CreateUser(ctx, role.Statements, usernameConfig, expiration)
	if err != nil {
		b.closeIfShutdown(role.DBName, err)
		unlockFunc()
		return nil, err
	}
	// Unlock
	unlockFunc()

	return map[string]interface{}{"username": username, "password": password}, nil
}

func main() {
	var procs []*pluginProcess
	b := &databaseBackend{
		connections: map[string]Database{},
		logger:      log.New(os.Stdout, "", 0),
		configs:     map[string]*DatabaseConfig{"pg": {PluginName: "postgresql-database-plugin", AllowedRoles: []string{"*"}}},
		roles:       map[string]*roleEntry{"app": {DBName: "pg", DefaultTTL: time.Hour, Statements: Statements{"CREATE ROLE ..."}}},
		pluginCatalog: func(name string) *pluginProcess {
			p := &pluginProcess{users: map[string]string{}}
			procs = append(procs, p)
			return p
		},
	}
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if i == 2 {
			// The plugin process crashes (OOM-killed) between two requests.
			procs[len(procs)-1].mu.Lock()
			procs[len(procs)-1].exited = true
			procs[len(procs)-1].mu.Unlock()
		}
		resp, err := b.pathCredsCreateRead(ctx, "app", "token")
		fmt.Printf("vault read database/creds/app #%d: %v err=%v\n", i, resp["username"], err)
	}
}
