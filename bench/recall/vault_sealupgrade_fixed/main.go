// Project: HashiCorp Vault (vault/core.go) -- FIXED TWIN.
// Change: Seal releases stateLock's read lock before calling sealInternal
//
//	(which takes the write lock and re-checks c.sealed).
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

var (
	ErrSealed           = errors.New("Vault is sealed")
	ErrStandby          = errors.New("Vault is in standby mode")
	ErrPermissionDenied = errors.New("permission denied")
)

type TokenEntry struct {
	ID       string
	Policies []string
}

type TokenStore struct{ tokens map[string]*TokenEntry }

func (ts *TokenStore) Lookup(id string) (*TokenEntry, error) {
	if te, ok := ts.tokens[id]; ok {
		return te, nil
	}
	return nil, ErrPermissionDenied
}

type Core struct {
	stateLock  sync.RWMutex
	sealed     bool
	standby    bool
	tokenStore *TokenStore
	barrier    map[string]string
}

// HandleRequest is the entry point for all logical requests.
func (c *Core) HandleRequest(path string) (string, error) {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	if c.sealed {
		return "", ErrSealed
	}
	if c.standby {
		return "", ErrStandby
	}
	return c.barrier[path], nil
}

// Seal takes in a token and seals the Vault if the token is a root token.
func (c *Core) Seal(token string) error {
	c.stateLock.RLock()
	if c.sealed {
		c.stateLock.RUnlock()
		return nil
	}
	if c.standby {
		c.stateLock.RUnlock()
		return ErrStandby
	}
	te, err := c.tokenStore.Lookup(token)
	if err != nil {
		c.stateLock.RUnlock()
		return err
	}
	if len(te.Policies) != 1 || te.Policies[0] != "root" {
		c.stateLock.RUnlock()
		return ErrPermissionDenied
	}
	c.stateLock.RUnlock()
	return c.sealInternal()
}

// sealInternal seals the barrier and tears down mounts.
func (c *Core) sealInternal() error {
	c.stateLock.Lock()
	defer c.stateLock.Unlock()
	if c.sealed {
		return nil
	}
	c.sealed = true
	c.barrier = nil
	fmt.Println("core: vault is sealed")
	return nil
}

func main() {
	c := &Core{
		tokenStore: &TokenStore{tokens: map[string]*TokenEntry{"s.root": {ID: "s.root", Policies: []string{"root"}}}},
		barrier:    map[string]string{"secret/db": "hunter2"},
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() { // API clients
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if _, err := c.HandleRequest("secret/db"); err != nil {
					return
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	time.Sleep(10 * time.Millisecond)
	if err := c.Seal("s.root"); err != nil { // vault operator seal
		fmt.Println("seal:", err)
	}
	wg.Wait()
}
