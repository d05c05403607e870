// Project: hashicorp/go-plugin (client.go)
// Bug: Client.Kill held c.l for its whole body (defer c.l.Unlock()) and,
//      after asking the plugin to shut down, waited on c.clientWaitGroup for
//      the process-monitoring goroutine. That goroutine, once the plugin
//      process exits, takes c.l to set c.exited before calling Done, so
//      Kill's Wait never returns.
// Fix: Kill only holds c.l long enough to copy the fields it needs, and
//      waits on clientWaitGroup without holding the lock.

package b18goplugin

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

type Protocol string

const ProtocolNetRPC Protocol = "netrpc"

// process is the subset of *exec.Cmd / runner.AttachedRunner used by Client.
type process struct {
	pid    int
	exitCh chan struct{}
	once   sync.Once
}

func (p *process) Wait() error { <-p.exitCh; return nil }

func (p *process) Kill() error { p.once.Do(func() { close(p.exitCh) }); return nil }

type rpcClient struct{ proc *process }

// Close sends the graceful shutdown request; the plugin exits shortly after.
func (c *rpcClient) Close() error {
	go func() {
		time.Sleep(5 * time.Millisecond)
		_ = c.proc.Kill()
	}()
	return nil
}

type ClientConfig struct {
	Cmd              string
	AllowedProtocols []Protocol
	StartTimeout     time.Duration
	Managed          bool
}

type Client struct {
	config            *ClientConfig
	exited            bool
	l                 sync.Mutex
	address           net.Addr
	process           *process
	client            *rpcClient
	protocol          Protocol
	negotiatedVersion int
	clientWaitGroup   sync.WaitGroup
	stderrWaitGroup   sync.WaitGroup
	processKilled     bool
}

func NewClient(config *ClientConfig) *Client { return &Client{config: config} }

// Start launches the plugin process and the goroutine that watches it.
func (c *Client) Start() (net.Addr, error) {
	c.l.Lock()
	defer c.l.Unlock()
	if c.address != nil {
		return c.address, nil
	}
	if c.config.Cmd == "" {
		return nil, errors.New("no command configured")
	}
	c.process = &process{pid: 31337, exitCh: make(chan struct{})}
	c.client = &rpcClient{proc: c.process}
	c.protocol = ProtocolNetRPC
	c.negotiatedVersion = 5

	c.clientWaitGroup.Add(1)
	go func(p *process) {
		defer c.clientWaitGroup.Done()
		_ = p.Wait()

		// Mark that we exited
		c.l.Lock()
		c.exited = true
		c.l.Unlock()
	}(c.process)

	c.address = &net.UnixAddr{Name: "/tmp/plugin123456", Net: "unix"}
	return c.address, nil
}

// Exited tells whether the underlying process has exited.
func (c *Client) Exited() bool {
	c.l.Lock()
	defer c.l.Unlock()
	return c.exited
}

// Kill ends the executing subprocess (if it is running) and perform any
// cleanup tasks necessary such as capturing any remaining logs and so on.
func (c *Client) Kill() {
	c.l.Lock()
	defer c.l.Unlock()

	process := c.process
	if process == nil {
		return
	}
	defer func() {
		// Wait for the all client goroutines to finish.
		c.clientWaitGroup.Wait()
		// Make sure there is no reference to the old process after it has been
		// killed.
		c.process = nil
	}()

	// Graceful shutdown first; fall back to killing the process.
	graceful := false
	if c.client != nil {
		graceful = c.client.Close() == nil
	}
	if graceful {
		select {
		case <-process.exitCh:
			return
		case <-time.After(2 * time.Second):
		}
	}
	c.processKilled = true
	_ = process.Kill()
}

func TestKillManagedPlugin(t *testing.T) {
	c := NewClient(&ClientConfig{Cmd: "terraform-provider-null", AllowedProtocols: []Protocol{ProtocolNetRPC},
		StartTimeout: time.Minute, Managed: true})
	if _, err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // CleanupClients on shutdown
		defer close(done)
		c.Kill()
	}()
	<-done
	if !c.Exited() {
		t.Fatal("plugin still running")
	}
}
