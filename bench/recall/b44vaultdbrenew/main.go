// Project: hashicorp/vault, database secrets backend, v0.9.0/0.9.1 (late 2017).
// Files: builtin/logical/database/secret_creds.go (secretCredsRenew),
// backend.go (databaseBackend with embedded sync.RWMutex, getDBObj,
// createDBObj, invalidate, clearConnection), logical/framework (LeaseExtend,
// Backend.HandleRequest, InvalidateKey), logical.LeaseOptions.ExpirationTime.
// Issue/PR: hashicorp/vault PR #3774 "Locking updates in database backend"
// (one place "where the lock could potentially not be released"), in 0.9.2.
//
// The renew callback takes the backend's read lock (upgraded to the write
// lock when the connection must be created), keeps the matching unlock in
// unlockFunc, and called it only inside `if expireTime :=
// resp.Secret.ExpirationTime(); !expireTime.IsZero()`. When the lease
// extension yields no TTL it returns with the lock held, and the next
// write-lock user (here the invalidation after a connection config update;
// also closeAllDBs on unmount) blocks forever. The fix unlocks on every path.
package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

type LeaseOptions struct {
	TTL, Increment time.Duration
	IssueTime      time.Time
}

// ExpirationTime is the zero time when the lease has no TTL.
func (l *LeaseOptions) ExpirationTime() (expireTime time.Time) {
	if l.TTL > 0 {
		expireTime = time.Now().Add(l.TTL)
	}
	return
}

type (
	Secret struct {
		LeaseOptions
		InternalData map[string]interface{}
	}
	Request         struct{ Secret *Secret }
	Response        struct{ Secret *Secret }
	OperationFunc   func(req *Request) (*Response, error)
	SystemView      struct{ DefaultLease, MaxLease time.Duration }
	FrameworkSecret struct {
		Type  string
		Renew OperationFunc
	}
	Backend struct {
		Secrets    []*FrameworkSecret
		Invalidate func(key string)
		system     SystemView
	}
)

func (b *Backend) HandleRequest(req *Request) (*Response, error) {
	for _, s := range b.Secrets {
		if s.Type == req.Secret.InternalData["secret_type"] {
			return s.Renew(req)
		}
	}
	return nil, errors.New("unsupported operation")
}

func (b *Backend) InvalidateKey(key string) { b.Invalidate(key) }

// LeaseExtend extends by the requested, backend or mount default increment.
func LeaseExtend(backendIncrement, backendMax time.Duration, sys SystemView) OperationFunc {
	return func(req *Request) (*Response, error) {
		leaseOpts := &req.Secret.LeaseOptions
		increment := leaseOpts.Increment
		if increment <= 0 && backendIncrement > 0 {
			increment = backendIncrement
		} else if increment <= 0 {
			increment = sys.DefaultLease
		}
		if maxValid := leaseOpts.IssueTime.Add(sys.MaxLease); maxValid.Before(time.Now().Add(increment)) {
			increment = time.Until(maxValid)
		}
		leaseOpts.TTL = increment
		return &Response{Secret: req.Secret}, nil
	}
}

type Database interface {
	RenewUser(statements, username string, expiration time.Time) error
	Close() error
}

type postgresDB struct{ validUntil map[string]time.Time }

func (p *postgresDB) Close() error { return nil }
func (p *postgresDB) RenewUser(stmts, username string, exp time.Time) error {
	p.validUntil[username] = exp
	return nil
}

type roleEntry struct {
	DBName, Statements string
	DefaultTTL, MaxTTL time.Duration
}

type databaseBackend struct {
	connections map[string]Database
	roles       map[string]*roleEntry
	*Backend
	sync.RWMutex
}

func (b *databaseBackend) getDBObj(name string) (db Database, ok bool) {
	db, ok = b.connections[name]
	return
}

func (b *databaseBackend) createDBObj(name string) (Database, error) {
	db := &postgresDB{validUntil: map[string]time.Time{}}
	b.connections[name] = db
	return db, nil
}

func (b *databaseBackend) invalidate(key string) {
	b.Lock()
	defer b.Unlock()
	if strings.HasPrefix(key, "config/") {
		b.clearConnection(strings.TrimPrefix(key, "config/"))
	}
}

func (b *databaseBackend) clearConnection(name string) {
	if db, ok := b.connections[name]; ok {
		db.Close()
		delete(b.connections, name)
	}
}

func (b *databaseBackend) secretCredsRenew() OperationFunc {
	return func(req *Request) (*Response, error) {
		username, _ := req.Secret.InternalData["username"].(string)
		role := b.roles[req.Secret.InternalData["role"].(string)]
		if role == nil {
			return nil, errors.New("error during renew: could not find role")
		}
		resp, err := LeaseExtend(role.DefaultTTL, role.MaxTTL, b.system)(req)
		if err != nil {
			return nil, err
		}
		b.RLock() // Grab the read lock
		var unlockFunc func() = b.RUnlock
		db, ok := b.getDBObj(role.DBName)
		if !ok {
			// Upgrade lock
			b.RUnlock()
			b.Lock()
			unlockFunc = b.Unlock
			db, err = b.createDBObj(role.DBName)
			if err != nil {
				unlockFunc()
				return nil, fmt.Errorf("could not retrieve db with name: %s, got error: %s", role.DBName, err)
			}
		}
		// Make sure we increase the VALID UNTIL endpoint for this user.
		if expireTime := resp.Secret.ExpirationTime(); !expireTime.IsZero() {
			err := db.RenewUser(role.Statements, username, expireTime)
			// Unlock
			unlockFunc()
			if err != nil {
				return nil, err
			}
		}
		return resp, nil
	}
}

func newDatabaseBackend(sys SystemView) *databaseBackend {
	b := &databaseBackend{connections: map[string]Database{}, roles: map[string]*roleEntry{}}
	secrets := []*FrameworkSecret{{Type: "creds", Renew: b.secretCredsRenew()}}
	b.Backend = &Backend{Secrets: secrets, Invalidate: b.invalidate, system: sys}
	return b
}

func main() {
	// No default lease TTL on the mount or the role: the renewal extends by 0.
	b := newDatabaseBackend(SystemView{DefaultLease: 0, MaxLease: 768 * time.Hour})
	b.roles["readonly"] = &roleEntry{DBName: "pg", Statements: "ALTER ROLE ..."}
	b.createDBObj("pg")
	req := &Request{Secret: &Secret{
		LeaseOptions: LeaseOptions{IssueTime: time.Now()},
		InternalData: map[string]interface{}{"secret_type": "creds", "username": "v-token-readonly-1", "role": "readonly"},
	}}
	resp, err := b.HandleRequest(req)
	fmt.Println("renew:", resp.Secret.TTL, err)
	// An operator rotates the connection URL: database/config/pg is rewritten.
	b.InvalidateKey("config/pg")
	fmt.Println("connection invalidated")
}
