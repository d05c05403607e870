// Project: HashiCorp Vault (vault/core.go, Core.Seal / sealInternal)
// Bug: Core.Seal takes c.stateLock.RLock() to validate the caller's root
//
//	token and the sealed/standby state, then, still holding the read lock
//	(released only by a deferred RUnlock), calls c.sealInternal(), which
//	takes c.stateLock.Lock(). A write lock can never be granted while the
//	same goroutine holds a read lock: `vault operator seal` hangs, and
//	every request (HandleRequest takes stateLock.RLock) queues behind the
//	pending writer, so the whole server stops answering.
//
// Upstream fix: not recalled by number; Seal releases the read lock before
//
//	sealInternal takes the write lock (and re-checks state under it).
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
	defer c.stateLock.RUnlock()
	if c.sealed {
		return nil
	}
	if c.standby {
		return ErrStandby
	}
	te, err := c.tokenStore.Lookup(token)
	if err != nil {
		return err
	}
	if len(te.Policies) != 1 || te.Policies[0] != "root" {
		return ErrPermissionDenied
	}
	return c.sealInternal()
}

// sealInternal seals the barrier and tears down mounts.
func (c *Core) sealInternal() error {
	c.stateLock.Lock() // DEADLOCK HERE
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
