// Project: HashiCorp Vault, vault.Core.stateLock.
// Bug: approximate (one of several stateLock re-entrancy fixes): Core.HandleRequest holds
// c.stateLock.RLock() for the whole request; the sys/leader handler called the exported
// c.Leader(), which takes c.stateLock.RLock() again. If Seal()/step-down queues
// c.stateLock.Lock() between the two RLocks, the nested RLock waits behind the writer and the
// writer waits for the outer RLock to be released.
// Fix: use an internal accessor (leaderLocked) that expects stateLock to be held already.
package vaultstate_fixed

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

var ErrSealed = errors.New("Vault is sealed")

type Request struct {
	Path        string
	ClientToken string
}

type Response struct{ Data map[string]any }

type SystemBackend struct{ Core *Core }

type Core struct {
	stateLock     sync.RWMutex
	sealed        bool
	standby       bool
	redirectAddr  string
	activeNode    string
	tokens        map[string]bool
	systemBackend *SystemBackend
}

// HandleRequest is the entry point for all API requests.
func (c *Core) HandleRequest(req *Request) (*Response, error) {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	if c.sealed {
		return nil, ErrSealed
	}
	return c.handleRequest(req)
}

func (c *Core) handleRequest(req *Request) (*Response, error) {
	if !c.tokens[req.ClientToken] {
		return nil, errors.New("permission denied")
	}
	time.Sleep(40 * time.Millisecond) // ACL / policy evaluation; widens the window
	return c.route(req)
}

func (c *Core) route(req *Request) (*Response, error) {
	switch {
	case strings.HasPrefix(req.Path, "sys/leader"):
		return c.systemBackend.handleLeaderStatus(req)
	default:
		return nil, errors.New("unsupported path")
	}
}

func (b *SystemBackend) handleLeaderStatus(req *Request) (*Response, error) {
	isLeader, address, err := b.Core.leaderLocked() // stateLock held by HandleRequest
	if err != nil {
		return nil, err
	}
	return &Response{Data: map[string]any{"is_self": isLeader, "leader_address": address}}, nil
}

// Leader is used to get the current active leader.
func (c *Core) Leader() (isLeader bool, leaderAddr string, err error) {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	return c.leaderLocked()
}

func (c *Core) leaderLocked() (bool, string, error) {
	if c.sealed {
		return false, "", ErrSealed
	}
	if !c.standby {
		return true, c.redirectAddr, nil
	}
	return false, c.activeNode, nil
}

// Seal takes the write lock and seals the vault.
func (c *Core) Seal(token string) error {
	c.stateLock.Lock()
	defer c.stateLock.Unlock()
	if !c.tokens[token] {
		return errors.New("permission denied")
	}
	c.sealed = true
	return nil
}

func TestStateLockRecursiveRLock(t *testing.T) {
	c := &Core{redirectAddr: "https://vault-0:8200", tokens: map[string]bool{"root": true}}
	c.systemBackend = &SystemBackend{Core: c}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // GET /v1/sys/leader
		defer wg.Done()
		resp, err := c.HandleRequest(&Request{Path: "sys/leader", ClientToken: "root"})
		t.Logf("leader: %v %v", resp, err)
	}()
	go func() { // PUT /v1/sys/seal
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		if err := c.Seal("root"); err != nil {
			t.Errorf("seal: %v", err)
		}
	}()
	wg.Wait()
}
