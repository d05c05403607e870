// Project: hashicorp/vault (http/sys_leader.go handleSysLeader, vault/logical_system.go handleLeaderStatus, vault/core.go GetLeaderStatus and Leader, vault/ha.go step-down, vault/request_handling.go switchedLockHandleRequest), v1.13 to v1.15, fixed November 2023.
// Bug: a sys/leader request that carries a namespace is served by the logical system backend under switchedLockHandleRequest, which
// read-locks c.stateLock for the whole request, and handleLeaderStatus calls Core.GetLeaderStatus, whose Core.Leader read-locks
// c.stateLock again; when the active node steps down and its HA loop queues for the write lock between the two read locks, the request
// and the step-down wait on each other forever (PR #24256, sibling of the seal-status fix #23861; fixed helper names approximate).
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

var ErrHANotEnabled = errors.New("Vault is not configured for highly-available mode")

type Request struct{ Operation, Path, Namespace string }
type Response struct{ Data map[string]interface{} }

type Backend interface { // logical.Backend
	HandleRequest(ctx context.Context, req *Request) (*Response, error)
}

type HALock interface{ Value() (bool, string, error) }
type HABackend interface { // physical.HABackend
	LockWith(key, value string) (HALock, error)
}
type inmemHA struct{ holder string }

func (h *inmemHA) LockWith(key, value string) (HALock, error) { return h, nil }
func (h *inmemHA) Value() (bool, string, error)               { return h.holder != "", h.holder, nil }

type routeEntry struct {
	prefix  string
	backend Backend // the mounted logical.Backend
}
type Router struct {
	l      sync.RWMutex
	routes []*routeEntry
}

func (r *Router) Route(ctx context.Context, req *Request) (*Response, error) {
	r.l.RLock()
	var re *routeEntry
	for _, e := range r.routes {
		if strings.HasPrefix(req.Path, e.prefix) {
			re = e
		}
	}
	r.l.RUnlock()
	if re == nil {
		return nil, fmt.Errorf("no handler for route %q", req.Path)
	}
	return re.backend.HandleRequest(ctx, &Request{req.Operation, strings.TrimPrefix(req.Path, re.prefix), req.Namespace})
}

type LeaderResponse struct {
	HAEnabled, IsSelf bool
	LeaderAddress     string
}

type Core struct {
	stateLock     sync.RWMutex
	standby       bool
	ha            HABackend
	router        *Router
	uuid          string
	redirectAddr  string
	activeContext context.Context
	activeCancel  context.CancelFunc
}

// Leader is used to get the current active leader in relation to this node.
func (c *Core) Leader() (isLeader bool, leaderAddr string, err error) {
	if c.ha == nil {
		return false, "", ErrHANotEnabled
	}
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	return c.LeaderLocked()
}

// LeaderLocked returns leader information. The caller must hold the state lock.
func (c *Core) LeaderLocked() (isLeader bool, leaderAddr string, err error) {
	lock, _ := c.ha.LockWith("core/lock", "read")
	held, leaderUUID, err := lock.Value()
	if err != nil || !held {
		return false, "", err
	}
	if !c.standby && leaderUUID == c.uuid {
		return true, c.redirectAddr, nil
	}
	return false, "https://" + leaderUUID + ":8200", nil
}

func (c *Core) GetLeaderStatus(lock bool) (*LeaderResponse, error) {
	haEnabled := true
	leader := c.LeaderLocked // request path: switchedLockHandleRequest already holds the read lock
	if lock {
		leader = c.Leader
	}
	isLeader, address, err := leader()
	if errors.Is(err, ErrHANotEnabled) {
		haEnabled, err = false, nil
	}
	if err != nil {
		return nil, err
	}
	return &LeaderResponse{HAEnabled: haEnabled, IsSelf: isLeader, LeaderAddress: address}, nil
}

// stepDown: what the HA loop does on "vault operator step-down" or lost leadership.
func (c *Core) stepDown() {
	c.stateLock.Lock()
	defer c.stateLock.Unlock()
	c.standby = true
	c.activeCancel()
}

func (c *Core) HandleRequest(httpCtx context.Context, req *Request) (*Response, error) {
	return c.switchedLockHandleRequest(httpCtx, req, true)
}

func (c *Core) switchedLockHandleRequest(httpCtx context.Context, req *Request, doLocking bool) (*Response, error) {
	if doLocking {
		c.stateLock.RLock()
		defer c.stateLock.RUnlock()
	}
	if c.activeContext.Err() != nil {
		return nil, errors.New("active context canceled after getting state lock")
	}
	ctx, cancel := context.WithCancel(c.activeContext)
	defer cancel()
	return c.handleCancelableRequest(ctx, req)
}

func (c *Core) handleCancelableRequest(ctx context.Context, req *Request) (*Response, error) {
	// Resolve the request namespace against the namespace store (a storage read) before routing.
	if req.Namespace != "" {
		time.Sleep(100 * time.Millisecond)
	}
	return c.router.Route(ctx, req)
}

type SystemBackend struct{ Core *Core }

func (b *SystemBackend) HandleRequest(ctx context.Context, req *Request) (*Response, error) {
	if req.Path == "leader" && req.Operation == "read" {
		return b.handleLeaderStatus(ctx, req)
	}
	return nil, fmt.Errorf("unsupported path %q", req.Path)
}

func (b *SystemBackend) handleLeaderStatus(ctx context.Context, req *Request) (*Response, error) {
	status, err := b.Core.GetLeaderStatus(false)
	if err != nil {
		return nil, err
	}
	return &Response{Data: map[string]interface{}{"leader": status}}, nil
}

// handleSysLeader serves GET /v1/sys/leader; namespace is the X-Vault-Namespace header.
func handleSysLeader(core *Core, namespace string) (*LeaderResponse, error) {
	if namespace == "" {
		return core.GetLeaderStatus(true)
	}
	resp, err := core.HandleRequest(context.Background(), &Request{Operation: "read", Path: "sys/leader", Namespace: namespace})
	if err != nil {
		return nil, err
	}
	return resp.Data["leader"].(*LeaderResponse), nil
}

func main() {
	activeCtx, cancel := context.WithCancel(context.Background())
	core := &Core{
		ha:            &inmemHA{holder: "node-1"},
		uuid:          "node-1",
		redirectAddr:  "https://vault-1:8200",
		activeContext: activeCtx,
		activeCancel:  cancel,
	}
	core.router = &Router{routes: []*routeEntry{{prefix: "sys/", backend: &SystemBackend{Core: core}}}}

	done := make(chan string, 2)
	go func() { // vault read -namespace=team-a sys/leader
		st, err := handleSysLeader(core, "team-a/")
		done <- fmt.Sprintf("sys/leader: %+v %v", st, err)
	}()
	time.Sleep(30 * time.Millisecond)
	go func() { // vault operator step-down
		core.stepDown()
		done <- "step-down done"
	}()
	fmt.Println(<-done)
	fmt.Println(<-done)
}
