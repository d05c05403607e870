// Project: dolthub/dolt (go/libraries/doltcore/sqle/cluster/controller.go, go/libraries/doltcore/sqle/database_provider.go), sql-server cluster replication, 1.x, 2023 (approximate, low confidence).
// Bug: CREATE DATABASE holds the DoltDatabaseProvider's mu while it runs the InitDatabaseHooks, and the cluster controller's hook reads the current role with roleAndEpoch (Controller.mu) before it installs the new database's commithooks; dolt_assume_cluster_role goes through setRoleAndEpoch, which holds Controller.mu while it tells the provider that it is now a standby through SetIsStandby (provider mu), so the two sessions deadlock AB-BA (fix reconstructed: update the provider's standby flag after Controller.mu is released).
package main

import (
	"fmt"
	"sync"
	"time"
)

type Role string

const (
	RolePrimary Role = "primary"
	RoleStandby Role = "standby"
)

type DoltEnv struct{ name string }

type SqlDatabase interface{ Name() string }

type database struct{ name string }

func (d database) Name() string { return d.name }

// InitDatabaseHook is run after a database is created or loaded, with the provider's mu held.
type InitDatabaseHook func(ctx string, pro *DoltDatabaseProvider, name string, env *DoltEnv, db SqlDatabase) error

type DoltDatabaseProvider struct {
	mu                *sync.RWMutex
	databases         map[string]SqlDatabase
	isStandby         *bool
	InitDatabaseHooks []InitDatabaseHook
}

func (p *DoltDatabaseProvider) SetIsStandby(standby bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	*p.isStandby = standby
}

func (p *DoltDatabaseProvider) CreateDatabase(ctx string, name string) error {
	return p.CreateCollatedDatabase(ctx, name, "utf8mb4_0900_bin")
}

func (p *DoltDatabaseProvider) CreateCollatedDatabase(ctx string, name string, collation string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if *p.isStandby {
		return fmt.Errorf("database server is set to read only mode")
	}
	if _, ok := p.databases[name]; ok {
		return fmt.Errorf("can't create database %s; database exists", name)
	}
	// InitRepo writes the noms store and the initial commit to disk.
	time.Sleep(30 * time.Millisecond)
	newEnv := &DoltEnv{name: name}
	return p.registerNewDatabase(ctx, name, newEnv)
}

func (p *DoltDatabaseProvider) registerNewDatabase(ctx string, name string, newEnv *DoltEnv) error {
	db := database{name: name}
	for _, hook := range p.InitDatabaseHooks {
		if err := hook(ctx, p, name, newEnv, db); err != nil {
			return err
		}
	}
	p.databases[name] = db
	return nil
}

type commithook struct {
	mu         sync.Mutex
	remotename string
	dbname     string
	role       Role
}

func (h *commithook) setRole(role Role) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.role = role
}

type dbProvider interface{ SetIsStandby(bool) }

type Controller struct {
	mu          sync.Mutex
	role        Role
	epoch       int
	commithooks []*commithook
	remotes     []string
	provider    dbProvider
}

func (c *Controller) roleAndEpoch() (Role, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.role, c.epoch
}

func (c *Controller) ManageDatabaseProvider(p dbProvider) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.provider = p
}

func (c *Controller) setProviderIsStandby(standby bool) {
	if c.provider != nil {
		c.provider.SetIsStandby(standby)
	}
}

func (c *Controller) NewInitDatabaseHook() InitDatabaseHook {
	return func(ctx string, pro *DoltDatabaseProvider, name string, denv *DoltEnv, db SqlDatabase) error {
		role, _ := c.roleAndEpoch()
		for _, r := range c.remotes {
			h := &commithook{remotename: r, dbname: name, role: role}
			c.mu.Lock()
			c.commithooks = append(c.commithooks, h)
			c.mu.Unlock()
		}
		return nil
	}
}

func (c *Controller) gracefulTransitionToStandby() {
	// waitForHooksToReplicate: wait until every standby caught up.
	time.Sleep(30 * time.Millisecond)
}

func (c *Controller) setRoleAndEpoch(role string, epoch int, graceful bool) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch == c.epoch && role == string(c.role) {
		return false, nil
	}
	if epoch <= c.epoch {
		return false, fmt.Errorf("error assuming role '%s' at epoch %d; already at epoch %d", role, epoch, c.epoch)
	}
	changedrole := role != string(c.role)
	if changedrole && Role(role) == RoleStandby && graceful {
		c.gracefulTransitionToStandby()
	}
	c.role = Role(role)
	c.epoch = epoch
	if changedrole {
		for _, h := range c.commithooks {
			h.setRole(c.role)
		}
		c.setProviderIsStandby(c.role != RolePrimary)
	}
	return changedrole, nil
}

func main() {
	standby := false
	pro := &DoltDatabaseProvider{mu: &sync.RWMutex{}, databases: map[string]SqlDatabase{}, isStandby: &standby}
	c := &Controller{role: RolePrimary, epoch: 1, remotes: []string{"standby_a"}}
	c.ManageDatabaseProvider(pro)
	pro.InitDatabaseHooks = append(pro.InitDatabaseHooks, c.NewInitDatabaseHook())

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // session 1: CREATE DATABASE orders
		defer wg.Done()
		if err := pro.CreateDatabase("sql-ctx-1", "orders"); err != nil {
			fmt.Println("create database:", err)
		}
	}()
	time.Sleep(5 * time.Millisecond)
	go func() { // session 2: CALL dolt_assume_cluster_role('standby', 2)
		defer wg.Done()
		if _, err := c.setRoleAndEpoch("standby", 2, true); err != nil {
			fmt.Println("assume role:", err)
		}
	}()
	wg.Wait()
	fmt.Println("role:", c.role, "standby:", *pro.isStandby, "hooks:", len(c.commithooks))
}
