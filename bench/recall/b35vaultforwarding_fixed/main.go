// Project: hashicorp/vault (vault/request_forwarding.go, vault/ha.go, vault/core.go)
// Issue: hashicorp/vault#12601 "Deadlock on HA leadership transfer when standby was actively forwarding a request", fixed by PR #12691 "Fix a Deadlock on HA leadership transfer"
//
// Fixed twin: as in PR #12691, ForwardRequest calls c.PerfStandby() before it
// read-locks requestForwardingConnectionLock, so it never waits for stateLock
// while holding the forwarding lock that clearForwardingClients needs.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

var ErrCannotForward = errors.New("cannot forward request; no connection or address not known")

// Request is the incoming client request (an *http.Request in Vault).
type Request struct {
	Method string
	URL    string
	Header map[string][]string
}

type forwardedRequest struct {
	Method string
	URL    string
}

type forwardResponse struct {
	StatusCode    uint32
	Body          []byte
	LastRemoteWal uint64
}

// forwardingClient is the gRPC RequestForwarding client to the active node.
type forwardingClient struct {
	addr string
}

func (f *forwardingClient) ForwardRequest(ctx context.Context, req *forwardedRequest) (*forwardResponse, error) {
	// The active node handles the request; this takes a while.
	time.Sleep(60 * time.Millisecond)
	return &forwardResponse{StatusCode: 200, Body: []byte(`{"data":{}}`), LastRemoteWal: 17}, nil
}

type Core struct {
	stateLock   sync.RWMutex
	standby     bool
	perfStandby bool
	leaderUUID  string

	requestForwardingConnectionLock sync.RWMutex
	rpcForwardingClient             *forwardingClient
	rpcClientConnCancelFunc         context.CancelFunc
}

// PerfStandby checks if the vault is a performance standby.
func (c *Core) PerfStandby() bool {
	c.stateLock.RLock()
	perfStandby := c.perfStandby
	c.stateLock.RUnlock()
	return perfStandby
}

// ForwardRequest forwards a given request to the active node and returns the
// response.
func (c *Core) ForwardRequest(req *Request) (int, map[string][]string, []byte, error) {
	// Read the perf-standby state before taking the forwarding lock: the
	// leadership path holds stateLock while it clears the forwarding clients.
	isPerfStandby := c.PerfStandby()
	c.requestForwardingConnectionLock.RLock()
	defer c.requestForwardingConnectionLock.RUnlock()

	if c.rpcForwardingClient == nil {
		return 0, nil, nil, ErrCannotForward
	}

	freq := &forwardedRequest{Method: req.Method, URL: req.URL}
	resp, err := c.rpcForwardingClient.ForwardRequest(context.Background(), freq)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("error during forwarding RPC request: %w", err)
	}

	// If we are a perf standby and the request was forwarded to the active node
	// we should attempt to wait for the WAL to ship to offer best effort read after
	// write guarantees
	if isPerfStandby && resp.LastRemoteWal > 0 {
		WaitUntilWALShipped(c, resp.LastRemoteWal)
	}

	return int(resp.StatusCode), map[string][]string{}, resp.Body, nil
}

func WaitUntilWALShipped(c *Core, remoteWALIndex uint64) {}

// clearForwardingClients tears down the connection to the previous active node.
func (c *Core) clearForwardingClients() {
	fmt.Println("core: clearing forwarding clients")
	defer fmt.Println("core: done clearing forwarding clients")

	c.requestForwardingConnectionLock.Lock()
	defer c.requestForwardingConnectionLock.Unlock()
	if c.rpcClientConnCancelFunc != nil {
		c.rpcClientConnCancelFunc()
		c.rpcClientConnCancelFunc = nil
	}
	c.rpcForwardingClient = nil
}

func (c *Core) startForwarding(ctx context.Context) error {
	// Clean up in case we have transitioned from a client to a server
	c.clearForwardingClients()
	return nil
}

func (c *Core) postUnseal(ctx context.Context) error {
	fmt.Println("core: post-unseal setup starting")
	if err := c.startForwarding(ctx); err != nil {
		return err
	}
	fmt.Println("core: post-unseal setup complete")
	return nil
}

// grabLockOrStop returns stopped=false if the lock is acquired. Returns
// stopped=true if the lock is not acquired, because stopCh was closed.
func grabLockOrStop(lockFunc, unlockFunc func(), stopCh chan struct{}) (stopped bool) {
	lockGrabbed := make(chan struct{})
	go func() {
		lockFunc()
		close(lockGrabbed)
	}()

	select {
	case <-stopCh:
		stopped = true
	case <-lockGrabbed:
	}

	if stopped {
		go func() {
			<-lockGrabbed
			unlockFunc()
		}()
	}
	return stopped
}

// waitForLeadership runs on a standby once it has acquired the HA lock.
func (c *Core) waitForLeadership(uuid string, stopCh chan struct{}) {
	fmt.Println("core: acquired lock, enabling active operation")

	// Grab the statelock or stop
	if stopped := grabLockOrStop(c.stateLock.Lock, c.stateLock.Unlock, stopCh); stopped {
		return
	}

	activeCtx, activeCtxCancel := context.WithCancel(context.Background())
	defer activeCtxCancel()

	// Attempt the post-unseal process
	if err := c.postUnseal(activeCtx); err == nil {
		c.standby = false
		c.perfStandby = false
		c.leaderUUID = uuid
	}
	c.stateLock.Unlock()
}

func main() {
	_, cancel := context.WithCancel(context.Background())
	c := &Core{
		standby:                 true,
		rpcForwardingClient:     &forwardingClient{addr: "https://vault-0:8201"},
		rpcClientConnCancelFunc: cancel,
	}

	var wg sync.WaitGroup
	wg.Add(2)

	// An HTTP handler on the standby forwards a write to the active node.
	go func() {
		defer wg.Done()
		req := &Request{Method: "PUT", URL: "https://vault-1:8200/v1/secret/data/app"}
		code, _, _, err := c.ForwardRequest(req)
		fmt.Println("forwarded request:", code, err)
	}()

	// While the RPC is in flight the active node steps down and this
	// standby acquires the HA lock.
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		c.waitForLeadership("8f2c0d1e", make(chan struct{}))
	}()

	wg.Wait()
	fmt.Println("standby:", c.standby)
}
