// Project: olivere/elastic (client.go: Client.Stop, sniffer, healthchecker), v2/v3 era, 2015-2016 (approximate).
// Bug: Client.Stop took c.mu (write, with a defer) for its whole body and, while holding it, did the stop handshake with the healthchecker and sniffer goroutines over healthcheckStop and snifferStop; a goroutine whose ticker fired runs healthcheck or sniff, which first read the client settings under c.mu.RLock, so it can never get back to its select to answer Stop, and Stop never releases c.mu (the fix only checks c.running under RLock, does the handshakes unlocked, and takes c.mu afterwards to clear running).
package main

import (
	"fmt"
	"sync"
	"time"
)

// Doer stands in for the *http.Client used by the real client.
type Doer interface {
	Do(method, url string) (int, []string, error)
}

// fakeCluster answers HEAD / (health check) and GET /_nodes/http (sniffing).
type fakeCluster struct{ latency time.Duration }

func (f *fakeCluster) Do(method, url string) (int, []string, error) {
	time.Sleep(f.latency)
	if method == "HEAD" {
		return 200, nil, nil
	}
	return 200, []string{"http://10.0.0.1:9200", "http://10.0.0.2:9200"}, nil
}

type conn struct {
	sync.RWMutex
	url  string
	dead bool
}

func newConn(url string) *conn { return &conn{url: url} }
func (c *conn) URL() string    { return c.url }
func (c *conn) IsDead() bool   { c.RLock(); defer c.RUnlock(); return c.dead }
func (c *conn) MarkAsDead()    { c.Lock(); c.dead = true; c.Unlock() }
func (c *conn) MarkAsAlive()   { c.Lock(); c.dead = false; c.Unlock() }

type Client struct {
	c Doer

	connsMu sync.RWMutex
	conns   []*conn

	mu                  sync.RWMutex
	urls                []string
	running             bool
	healthcheckEnabled  bool
	healthcheckInterval time.Duration
	healthcheckStop     chan bool
	snifferEnabled      bool
	snifferInterval     time.Duration
	snifferStop         chan bool
}

func NewClient(d Doer, urls ...string) *Client {
	c := &Client{c: d, urls: urls,
		healthcheckEnabled: true, healthcheckInterval: 10 * time.Millisecond, healthcheckStop: make(chan bool),
		snifferEnabled: true, snifferInterval: 40 * time.Millisecond, snifferStop: make(chan bool)}
	for _, u := range urls {
		c.conns = append(c.conns, newConn(u))
	}
	c.Start()
	return c
}

func (c *Client) Start() {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return
	}
	c.running = true
	c.mu.Unlock()
	if c.snifferEnabled {
		go c.sniffer()
	}
	if c.healthcheckEnabled {
		go c.healthchecker()
	}
}

// Stop stops the background processes that the client is running,
// i.e. sniffing the cluster periodically and running health checks
// on the nodes.
func (c *Client) Stop() {
	c.mu.RLock()
	if !c.running {
		c.mu.RUnlock()
		return
	}
	c.mu.RUnlock()

	if c.healthcheckEnabled {
		c.healthcheckStop <- true
		<-c.healthcheckStop
	}

	if c.snifferEnabled {
		c.snifferStop <- true
		<-c.snifferStop
	}

	c.mu.Lock()
	c.running = false
	c.mu.Unlock()
}

func (c *Client) sniffer() {
	c.mu.RLock()
	interval := c.snifferInterval
	c.mu.RUnlock()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-c.snifferStop:
			// we are asked to stop, so we signal back that we're stopping now
			c.snifferStop <- true
			return
		case <-ticker.C:
			c.sniff()
		}
	}
}

func (c *Client) sniff() error {
	c.mu.RLock()
	if !c.snifferEnabled {
		c.mu.RUnlock()
		return nil
	}
	urls := append([]string(nil), c.urls...)
	c.mu.RUnlock()

	for _, url := range urls {
		status, nodes, err := c.c.Do("GET", url+"/_nodes/http")
		if err == nil && status == 200 && len(nodes) > 0 {
			var conns []*conn
			for _, n := range nodes {
				conns = append(conns, newConn(n))
			}
			c.updateConns(conns)
			return nil
		}
	}
	return fmt.Errorf("no Elasticsearch node available")
}

func (c *Client) updateConns(conns []*conn) {
	c.connsMu.Lock()
	c.conns = conns
	c.connsMu.Unlock()
}

func (c *Client) healthchecker() {
	c.mu.RLock()
	interval := c.healthcheckInterval
	c.mu.RUnlock()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-c.healthcheckStop:
			c.healthcheckStop <- true
			return
		case <-ticker.C:
			c.healthcheck(false)
		}
	}
}

func (c *Client) healthcheck(force bool) {
	c.mu.RLock()
	if !c.healthcheckEnabled && !force {
		c.mu.RUnlock()
		return
	}
	c.mu.RUnlock()

	c.connsMu.RLock()
	conns := c.conns
	c.connsMu.RUnlock()

	for _, conn := range conns {
		status, _, err := c.c.Do("HEAD", conn.URL())
		if err == nil && status >= 200 && status < 300 {
			conn.MarkAsAlive()
		} else {
			conn.MarkAsDead()
		}
	}
}

func main() {
	client := NewClient(&fakeCluster{latency: 60 * time.Millisecond}, "http://127.0.0.1:9200")
	time.Sleep(15 * time.Millisecond) // first health check is in flight
	client.Stop()
	fmt.Println("client stopped")
}
