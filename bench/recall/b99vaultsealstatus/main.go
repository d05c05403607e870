// Project: hashicorp/vault (http/sys_seal.go handleSysSealStatus, vault/logical_system.go handleSealStatus, vault/core.go GetSealStatus and SecretProgress, vault/request_handling.go switchedLockHandleRequest), v1.13 to v1.15, fixed October 2023.
// Bug: since PR #10725 a sys/seal-status request that carries a namespace is answered by the logical system backend, so it runs
// under switchedLockHandleRequest, which read-locks c.stateLock for the whole request, and handleSealStatus then calls
// Core.GetSealStatus, whose SecretProgress read-locks c.stateLock again; a seal (or step-down) that queues for the write lock
// between the two read locks deadlocks the request, the writer and every later request (PR #23861 adds a lock argument).
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var ErrSealed = errors.New("Vault is sealed")

type Request struct{ Operation, Path, Namespace string }

type Response struct{ Data map[string]interface{} }

// logical.Backend
type Backend interface {
	HandleRequest(ctx context.Context, req *Request) (*Response, error)
}

type SealConfig struct {
	Type                          string
	SecretShares, SecretThreshold int
}

type Seal interface {
	BarrierConfig(ctx context.Context) (*SealConfig, error)
}

type defaultSeal struct{ config *SealConfig }

func (d *defaultSeal) BarrierConfig(ctx context.Context) (*SealConfig, error) {
	time.Sleep(100 * time.Millisecond) // read core/seal-config from the storage backend
	return d.config, nil
}

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
	clone := *req
	clone.Path = strings.TrimPrefix(req.Path, re.prefix)
	return re.backend.HandleRequest(ctx, &clone)
}

type unlockInformation struct {
	Parts [][]byte
	Nonce string
}

type SealStatusResponse struct {
	Type           string
	Sealed         bool
	T, N, Progress int
	Nonce          string
}

type Core struct {
	stateLock     sync.RWMutex
	sealed        *uint32
	unlockInfo    *unlockInformation
	seal          Seal
	router        *Router
	activeContext context.Context
	activeCancel  context.CancelFunc
}

func (c *Core) Sealed() bool { return atomic.LoadUint32(c.sealed) == 1 }

// SecretProgress returns the number of keys provided so far.
func (c *Core) SecretProgress() (int, string) {
	c.stateLock.RLock()
	defer c.stateLock.RUnlock()
	if c.unlockInfo == nil {
		return 0, ""
	}
	return len(c.unlockInfo.Parts), c.unlockInfo.Nonce
}

func (c *Core) GetSealStatus(ctx context.Context) (*SealStatusResponse, error) {
	sealed := c.Sealed()
	sealConfig, err := c.seal.BarrierConfig(ctx)
	if err != nil {
		return nil, err
	}
	progress, nonce := c.SecretProgress()
	return &SealStatusResponse{Type: sealConfig.Type, Sealed: sealed, T: sealConfig.SecretThreshold,
		N: sealConfig.SecretShares, Progress: progress, Nonce: nonce}, nil
}

// sealInternal takes the state lock for writing and tears the active state down.
func (c *Core) sealInternal() error {
	c.stateLock.Lock()
	defer c.stateLock.Unlock()
	if atomic.CompareAndSwapUint32(c.sealed, 0, 1) {
		c.activeCancel()
	}
	return nil
}

func (c *Core) HandleRequest(httpCtx context.Context, req *Request) (*Response, error) {
	return c.switchedLockHandleRequest(httpCtx, req, true)
}

func (c *Core) switchedLockHandleRequest(httpCtx context.Context, req *Request, doLocking bool) (*Response, error) {
	if doLocking {
		c.stateLock.RLock()
		defer c.stateLock.RUnlock()
	}
	if c.Sealed() {
		return nil, ErrSealed
	}
	ctx, cancel := context.WithCancel(c.activeContext)
	defer cancel()
	return c.router.Route(ctx, req)
}

type SystemBackend struct{ Core *Core }

func (b *SystemBackend) HandleRequest(ctx context.Context, req *Request) (*Response, error) {
	if req.Path == "seal-status" && req.Operation == "read" {
		return b.handleSealStatus(ctx, req)
	}
	return nil, fmt.Errorf("unsupported path %q", req.Path)
}

func (b *SystemBackend) handleSealStatus(ctx context.Context, req *Request) (*Response, error) {
	status, err := b.Core.GetSealStatus(ctx)
	if err != nil {
		return nil, err
	}
	return &Response{Data: map[string]interface{}{"status": status}}, nil
}

// handleSysSealStatus serves GET /v1/sys/seal-status; namespace is the X-Vault-Namespace header.
func handleSysSealStatus(core *Core, namespace string) (*SealStatusResponse, error) {
	if namespace == "" {
		return core.GetSealStatus(context.Background())
	}
	// Namespaced requests go through the logical system backend.
	resp, err := core.HandleRequest(context.Background(), &Request{Operation: "read", Path: "sys/seal-status", Namespace: namespace})
	if err != nil {
		return nil, err
	}
	return resp.Data["status"].(*SealStatusResponse), nil
}

func main() {
	sealed := uint32(0)
	activeCtx, cancel := context.WithCancel(context.Background())
	core := &Core{
		sealed:        &sealed,
		seal:          &defaultSeal{config: &SealConfig{Type: "shamir", SecretShares: 5, SecretThreshold: 3}},
		activeContext: activeCtx,
		activeCancel:  cancel,
	}
	core.router = &Router{routes: []*routeEntry{{prefix: "sys/", backend: &SystemBackend{Core: core}}}}

	done := make(chan string, 2)
	go func() { // vault status -namespace=team-a
		st, err := handleSysSealStatus(core, "team-a/")
		done <- fmt.Sprintf("seal-status: %+v %v", st, err)
	}()
	time.Sleep(30 * time.Millisecond)
	go func() { // vault operator seal
		done <- fmt.Sprint("seal: ", core.sealInternal())
	}()
	fmt.Println(<-done)
	fmt.Println(<-done)
}
