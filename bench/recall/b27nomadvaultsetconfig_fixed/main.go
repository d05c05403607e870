// Project: hashicorp/nomad (nomad/vault.go, server-side vaultClient)
// PR: #6082 "vault: fix deadlock in SetConfig" (Nomad 0.9.5).
//
// vaultClient runs its background goroutines (establishConnection,
// revokeDaemon) under a tomb. SetConfig (called on SIGHUP config reload via
// Server.Reload) takes v.l, then kills the tomb and calls v.tomb.Wait() while
// still holding v.l. establishConnection, once it got past the InitStatus
// retry loop, validates the token and finally records the outcome under
// v.l (connEstablished / connEstablishedErr) before returning. So Wait cannot
// return until establishConnection exits, and establishConnection cannot exit
// until SetConfig drops v.l:
//
//	SetConfig -> tomb.Wait
//	   ^              |
//	   |              v
//	v.l.Lock <- establishConnection
//
// FIXED twin (PR #6082): SetConfig releases v.l around tomb.Wait().
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- gopkg.in/tomb.v2 (reduced) ----
type Tomb struct {
	once, killOnce sync.Once
	dying          chan struct{}
	alive          sync.WaitGroup // tomb.Wait blocks until every tracked goroutine returned
}

func (t *Tomb) init()                  { t.once.Do(func() { t.dying = make(chan struct{}) }) }
func (t *Tomb) Dying() <-chan struct{} { t.init(); return t.dying }
func (t *Tomb) Kill(reason error)      { t.init(); t.killOnce.Do(func() { close(t.dying) }) }
func (t *Tomb) Wait() error            { t.alive.Wait(); return nil }
func (t *Tomb) Go(f func() error) {
	t.init()
	t.alive.Add(1)
	go func() { defer t.alive.Done(); f() }()
}

// ---- nomad/vault.go ----
type VaultConfig struct {
	Enabled             bool
	Addr, Token         string
	ConnectionRetryIntv time.Duration
}

type vapiClient struct{ addr string }

func (c *vapiClient) InitStatus() (bool, error) { time.Sleep(5 * time.Millisecond); return true, nil }
func (c *vapiClient) LookupSelf() error         { time.Sleep(60 * time.Millisecond); return nil }

type vaultClient struct {
	client             *vapiClient
	config             *VaultConfig
	connEstablished    bool
	connEstablishedErr error
	running            bool
	tomb               *Tomb

	// l is used to lock the configuration aspects of the client such that
	// multiple callers can't cause conflicting config updates
	l sync.Mutex
}

func wrapNilError(f func()) func() error { return func() error { f(); return nil } }

func NewVaultClient(c *VaultConfig) (*vaultClient, error) {
	v := &vaultClient{config: c, tomb: &Tomb{}}
	if v.config.Enabled {
		if err := v.buildClient(); err != nil {
			return nil, err
		}
		v.tomb.Go(wrapNilError(v.establishConnection))
		v.tomb.Go(wrapNilError(v.revokeDaemon))
		v.running = true
	}
	return v, nil
}

func (v *vaultClient) buildClient() error {
	if v.config.Token == "" {
		return errors.New("Vault token must be set")
	}
	v.client = &vapiClient{addr: v.config.Addr}
	return nil
}

// SetConfig is used to update the Vault config being used.
func (v *vaultClient) SetConfig(config *VaultConfig) error {
	v.l.Lock()
	defer v.l.Unlock()

	// Kill any background routines
	if v.running {
		// Stop accepting any new request
		v.connEstablished = false
		// Kill any background routine and create a new tomb
		v.tomb.Kill(nil)
		// Locking around tomb.Wait can deadlock with
		// establishConnection exiting, so we must unlock here.
		v.l.Unlock()
		v.tomb.Wait()
		v.l.Lock()
		v.tomb = &Tomb{}
		v.running = false
	}
	v.config = config
	if v.config.Enabled {
		if err := v.buildClient(); err != nil {
			return err
		}
		v.tomb.Go(wrapNilError(v.establishConnection))
		v.tomb.Go(wrapNilError(v.revokeDaemon))
		v.running = true
	}
	return nil
}

func (v *vaultClient) establishConnection() {
	retryTimer := time.NewTimer(0)
OUTER:
	for {
		select {
		case <-v.tomb.Dying():
			return
		case <-retryTimer.C:
			if _, err := v.client.InitStatus(); err != nil {
				retryTimer.Reset(v.config.ConnectionRetryIntv)
				continue OUTER
			}
			break OUTER
		}
	}
	err := v.parseSelfToken() // validate the token/role against Vault
	v.l.Lock()
	v.connEstablished = err == nil
	v.connEstablishedErr = err
	v.l.Unlock()
}

func (v *vaultClient) parseSelfToken() error { return v.client.LookupSelf() }

func (v *vaultClient) revokeDaemon() { <-v.tomb.Dying() }

func main() {
	cfg := &VaultConfig{Enabled: true, Addr: "https://vault:8200", Token: "s.old", ConnectionRetryIntv: 30 * time.Second}
	v, _ := NewVaultClient(cfg)
	time.Sleep(20 * time.Millisecond) // establishConnection is inside parseSelfToken
	// SIGHUP: agent reloads the server config with a rotated Vault token.
	_ = v.SetConfig(&VaultConfig{Enabled: true, Addr: cfg.Addr, Token: "s.new", ConnectionRetryIntv: 30 * time.Second})
	fmt.Println("vault config reloaded")
}
