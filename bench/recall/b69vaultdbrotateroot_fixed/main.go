// Reconstruction of hashicorp/vault#4309, "Fix deadlock in root credential
// rotation" (the new database/rotate-root endpoint of Vault 0.10).
//
// The database secrets backend caches one dbPluginInstance per connection;
// the instance embeds a sync.RWMutex next to the plugin (dbplugin.Database),
// and its Close method takes that lock. pathRotateCredentialsUpdate fetched the
// connection, write-locked the instance for the rotation, asked the plugin to
// rotate the root password, stored the new connection details and then called
// the exported ClearConnection to drop the cached plugin. ClearConnection
// takes the backend lock and closes the instance through dbPluginInstance.Close,
// which write-locks the instance the handler is still holding. The rotation
// request never returns and every credential request for that connection
// blocks on the instance lock behind it.
//
// The fixed twin follows the upstream fix: the handler takes the backend lock
// before the instance lock and closes the plugin and deletes the connection
// inline instead of going through ClearConnection.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Database is the dbplugin.Database interface of the era.
type Database interface {
	CreateUser(ctx context.Context, statements []string, usernamePrefix string) (string, string, error)
	RotateRootCredentials(ctx context.Context, statements []string) (map[string]interface{}, error)
	Close() error
}

type postgreSQL struct {
	connectionURL string
	password      string
	users         int
}

func (p *postgreSQL) CreateUser(ctx context.Context, statements []string, prefix string) (string, string, error) {
	p.users++
	return fmt.Sprintf("v-%s-%d", prefix, p.users), "A1a-generated", nil
}

func (p *postgreSQL) RotateRootCredentials(ctx context.Context, statements []string) (map[string]interface{}, error) {
	time.Sleep(20 * time.Millisecond) // ALTER ROLE "vault-root" WITH PASSWORD ...
	p.password = "rotated-root-password"
	return map[string]interface{}{"connection_url": p.connectionURL, "password": p.password}, nil
}

func (p *postgreSQL) Close() error { return nil }

type dbPluginInstance struct {
	sync.RWMutex
	Database

	id     string
	name   string
	closed bool
}

func (dbi *dbPluginInstance) Close() error {
	dbi.Lock()
	defer dbi.Unlock()
	if dbi.closed {
		return nil
	}
	dbi.closed = true
	return dbi.Database.Close()
}

type DatabaseConfig struct {
	ConnectionDetails               map[string]interface{}
	RootCredentialsRotateStatements []string
}

type databaseBackend struct {
	connections map[string]*dbPluginInstance
	storage     map[string]*DatabaseConfig
	nextID      int
	sync.RWMutex
}

func (b *databaseBackend) DatabaseConfig(ctx context.Context, name string) (*DatabaseConfig, error) {
	b.RLock()
	defer b.RUnlock()
	return b.storage[name], nil
}

func (b *databaseBackend) GetConnection(ctx context.Context, name string) (*dbPluginInstance, error) {
	b.RLock()
	unlockFunc := b.RUnlock
	defer func() { unlockFunc() }()

	db, ok := b.connections[name]
	if ok {
		return db, nil
	}
	// Upgrade lock
	b.RUnlock()
	b.Lock()
	unlockFunc = b.Unlock
	if db, ok = b.connections[name]; ok {
		return db, nil
	}
	config := b.storage[name]
	b.nextID++
	db = &dbPluginInstance{
		Database: &postgreSQL{connectionURL: config.ConnectionDetails["connection_url"].(string)},
		id:       fmt.Sprintf("plugin-%d", b.nextID),
		name:     name,
	}
	b.connections[name] = db
	return db, nil
}

// ClearConnection closes the database connection and removes it from the
// b.connections map.
func (b *databaseBackend) ClearConnection(name string) error {
	b.Lock()
	defer b.Unlock()
	db, ok := b.connections[name]
	if ok {
		db.Close()
		delete(b.connections, name)
	}
	return nil
}

func (b *databaseBackend) pathRotateCredentialsUpdate(ctx context.Context, name string) error {
	config, err := b.DatabaseConfig(ctx, name)
	if err != nil {
		return err
	}
	db, err := b.GetConnection(ctx, name)
	if err != nil {
		return err
	}

	// Take out the backend lock since we are swapping out the connection
	b.Lock()
	defer b.Unlock()

	// Take the write lock on the instance
	db.Lock()
	defer db.Unlock()

	connectionDetails, err := db.RotateRootCredentials(ctx, config.RootCredentialsRotateStatements)
	if err != nil {
		return err
	}
	config.ConnectionDetails = connectionDetails

	// Close the plugin
	db.closed = true
	if err := db.Database.Close(); err != nil {
		fmt.Println("error closing the database plugin connection:", err)
	}
	// Even on error, still remove the connection
	delete(b.connections, name)
	return nil
}

func (b *databaseBackend) pathCredsCreateRead(ctx context.Context, name, role string) (string, error) {
	db, err := b.GetConnection(ctx, name)
	if err != nil {
		return "", err
	}
	db.RLock()
	defer db.RUnlock()
	username, _, err := db.CreateUser(ctx, []string{`CREATE ROLE "{{name}}"`}, role)
	return username, err
}

func main() {
	ctx := context.Background()
	b := &databaseBackend{
		connections: map[string]*dbPluginInstance{},
		storage: map[string]*DatabaseConfig{"orders-db": {
			ConnectionDetails:               map[string]interface{}{"connection_url": "postgres://{{username}}:{{password}}@orders:5432/"},
			RootCredentialsRotateStatements: []string{`ALTER USER "{{name}}" WITH PASSWORD '{{password}}'`},
		}},
	}
	user, _ := b.pathCredsCreateRead(ctx, "orders-db", "readonly")
	fmt.Println("vault read database/creds/readonly:", user)

	credsDone := make(chan struct{})
	go func() { // an application renews its credentials during the rotation
		defer close(credsDone)
		time.Sleep(10 * time.Millisecond)
		user, err := b.pathCredsCreateRead(ctx, "orders-db", "readonly")
		fmt.Println("vault read database/creds/readonly:", user, err)
	}()

	err := b.pathRotateCredentialsUpdate(ctx, "orders-db") // vault write -f database/rotate-root/orders-db
	fmt.Println("rotate-root:", err)
	<-credsDone
}
