// Project: HashiCorp Vault database secrets engine with the MongoDB Atlas database plugin (hashicorp/vault-plugin-database-mongodbatlas: connection_producer.go, mongodbatlas.go; bundled with Vault 1.4), January 2020, fixed by PR #4 "Remove Lock in Connection()".
// Bug: MongoDBAtlas.CreateUser takes the connection producer's embedded sync.Mutex for the whole operation and then obtains the Atlas API client through getConnection, which calls mongoDBAtlasConnectionProducer.Connection. Connection also locked the same embedded mutex, so the first "vault read database/creds/<role>" against an Atlas connection hung forever ("The lock is already held by the caller so having it here causes a deadlock"). The fix drops the lock from Connection, which relies on its callers holding it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- sdk/database/dbplugin (v4 interface) ----
type Statements struct{ Creation []string }

type UsernameConfig struct{ DisplayName, RoleName string }

type Database interface {
	CreateUser(ctx context.Context, statements Statements, usernameConfig UsernameConfig, expiration time.Time) (username string, password string, err error)
	Init(ctx context.Context, config map[string]interface{}, verifyConnection bool) (map[string]interface{}, error)
}

var (
	ErrNotInitialized         = errors.New("connection has not been initialized")
	ErrEmptyCreationStatement = errors.New("empty creation statements")
)

// ---- go.mongodb.org/atlas/mongodbatlas stand-in ----
type DatabaseUser struct {
	DatabaseName string              `json:"database_name"`
	Username     string              `json:"username"`
	Password     string              `json:"password"`
	Roles        []map[string]string `json:"roles"`
}

type DatabaseUsersService struct {
	mu    sync.Mutex
	users map[string]DatabaseUser
}

func (s *DatabaseUsersService) Create(ctx context.Context, groupID string, u *DatabaseUser) (*DatabaseUser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[groupID+"/"+u.Username] = *u
	return u, nil
}

type AtlasClient struct{ DatabaseUsers *DatabaseUsersService }

// ---- plugin: connection_producer.go ----
type mongoDBAtlasConnectionProducer struct {
	PublicKey  string
	PrivateKey string
	ProjectID  string

	Initialized bool
	client      *AtlasClient
	sync.Mutex
}

func (c *mongoDBAtlasConnectionProducer) Init(ctx context.Context, conf map[string]interface{}, verifyConnection bool) (map[string]interface{}, error) {
	c.Lock()
	defer c.Unlock()
	c.PublicKey, _ = conf["public_key"].(string)
	c.PrivateKey, _ = conf["private_key"].(string)
	c.ProjectID, _ = conf["project_id"].(string)
	if len(c.PublicKey) == 0 || len(c.PrivateKey) == 0 {
		return nil, errors.New("public and private key must be set")
	}
	// Set initialized to true at this point since all fields are set,
	// and the connection can be established at a later time.
	c.Initialized = true
	return conf, nil
}

func (c *mongoDBAtlasConnectionProducer) Connection(_ context.Context) (interface{}, error) {
	c.Lock()
	defer c.Unlock()

	if !c.Initialized {
		return nil, ErrNotInitialized
	}
	if c.client != nil {
		return c.client, nil
	}
	// digest.NewTransport(c.PublicKey, c.PrivateKey) + mongodbatlas.New
	c.client = &AtlasClient{DatabaseUsers: &DatabaseUsersService{users: map[string]DatabaseUser{}}}
	return c.client, nil
}

// ---- plugin: mongodbatlas.go ----
type CredentialsProducer interface {
	GenerateUsername(usernameConfig UsernameConfig) (string, error)
	GeneratePassword() (string, error)
}

type atlasCredentialsProducer struct{}

func (atlasCredentialsProducer) GenerateUsername(cfg UsernameConfig) (string, error) {
	return fmt.Sprintf("v-%s-%s-%d", cfg.DisplayName, cfg.RoleName, time.Now().Unix()), nil
}

func (atlasCredentialsProducer) GeneratePassword() (string, error) { return "A1a-s3cr3t", nil }

type MongoDBAtlas struct {
	*mongoDBAtlasConnectionProducer
	CredentialsProducer
}

func New() (interface{}, error) {
	connProducer := &mongoDBAtlasConnectionProducer{}
	return &MongoDBAtlas{mongoDBAtlasConnectionProducer: connProducer, CredentialsProducer: atlasCredentialsProducer{}}, nil
}

func (m *MongoDBAtlas) CreateUser(ctx context.Context, statements Statements, usernameConfig UsernameConfig, expiration time.Time) (username string, password string, err error) {
	// Grab the lock
	m.Lock()
	defer m.Unlock()

	if len(statements.Creation) == 0 {
		return "", "", ErrEmptyCreationStatement
	}
	client, err := m.getConnection(ctx)
	if err != nil {
		return "", "", err
	}
	username, _ = m.GenerateUsername(usernameConfig)
	password, _ = m.GeneratePassword()
	// Unmarshal creation statements into mongodb atlas database users
	var databaseUser DatabaseUser
	if err := json.Unmarshal([]byte(statements.Creation[0]), &databaseUser); err != nil {
		return "", "", fmt.Errorf("error unmarshalling statement %s", err)
	}
	databaseUser.Username, databaseUser.Password = username, password
	if _, err := client.DatabaseUsers.Create(ctx, m.ProjectID, &databaseUser); err != nil {
		return "", "", err
	}
	return username, password, nil
}

func (m *MongoDBAtlas) getConnection(ctx context.Context) (*AtlasClient, error) {
	client, err := m.Connection(ctx)
	if err != nil {
		return nil, err
	}
	return client.(*AtlasClient), nil
}

// ---- vault: builtin/logical/database ----
type dbPluginInstance struct {
	sync.RWMutex
	Database
	name string
}

type databaseBackend struct {
	sync.RWMutex
	connections map[string]*dbPluginInstance
	configs     map[string]map[string]interface{}
}

func (b *databaseBackend) GetConnection(ctx context.Context, name string) (*dbPluginInstance, error) {
	b.Lock()
	defer b.Unlock()
	if dbi, ok := b.connections[name]; ok {
		return dbi, nil
	}
	raw, _ := New()
	db := raw.(Database)
	if _, err := db.Init(ctx, b.configs[name], false); err != nil {
		return nil, err
	}
	dbi := &dbPluginInstance{Database: db, name: name}
	b.connections[name] = dbi
	return dbi, nil
}

// pathCredsCreateRead serves "vault read database/creds/<role>".
func (b *databaseBackend) pathCredsCreateRead(ctx context.Context, dbName, role string, stmts Statements) (string, error) {
	dbi, err := b.GetConnection(ctx, dbName)
	if err != nil {
		return "", err
	}
	dbi.RLock()
	defer dbi.RUnlock()
	username, _, err := dbi.CreateUser(ctx, stmts, UsernameConfig{DisplayName: "token", RoleName: role}, time.Now().Add(time.Hour))
	return username, err
}

func main() {
	b := &databaseBackend{
		connections: map[string]*dbPluginInstance{},
		configs: map[string]map[string]interface{}{
			"atlas": {"public_key": "ABCDEFGH", "private_key": "0f1e2d3c-aaaa", "project_id": "5cf5a45a9ccf6400e60981b6"},
		},
	}
	stmts := Statements{Creation: []string{`{"database_name": "admin", "roles": [{"databaseName": "orders", "roleName": "read"}]}`}}
	username, err := b.pathCredsCreateRead(context.Background(), "atlas", "readonly", stmts)
	fmt.Printf("issued credentials: username=%q err=%v\n", username, err)
}
