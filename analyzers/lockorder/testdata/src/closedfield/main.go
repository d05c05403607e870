// Package main: in a program nothing imports, an exported constructor is
// called only here, so the dynamic types stored into an interface field
// through its parameter are known from the program's own calls (etcd's v2
// client: the members API built on the client itself while it holds its
// write lock).
package main

import "sync"

type doer interface{ Do() int }

type Client interface {
	doer
	Sync()
}

type clusterClient struct {
	mu          sync.RWMutex
	n           int
	leaderFirst bool
	simple      doer
}

func (c *clusterClient) Do() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.n + c.simple.Do()
}

// simpleClient is another doer, the cluster client's transport.
type simpleClient struct{ n int }

func (s *simpleClient) Do() int { return s.n }

type membersAPI struct {
	client doer
}

func NewMembersAPI(c Client) *membersAPI { return &membersAPI{client: c} }

func (m *membersAPI) Leader() int { return m.client.Do() }

// refresh asks the members API for the leader when the client prefers
// it: a branch on the client's state, so the read lock is taken on the
// paths that call Leader.
func (c *clusterClient) refresh() {
	if c.leaderFirst {
		c.n = NewMembersAPI(c).Leader()
	}
}

func (c *clusterClient) Sync() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refresh() // want `clusterClient.mu locked again by clusterClient.refresh -> membersAPI.Leader -> clusterClient.Do \(at main.go:\d+, on the paths that call clusterClient.Do\) while held since main.go:\d+: self-deadlock \[double-lock\]`
}

// SyncFixed asks the members API before it locks. Silent.
func (c *clusterClient) SyncFixed() {
	n := NewMembersAPI(c).Leader()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = n
}

func main() {
	c := &clusterClient{simple: &simpleClient{}}
	c.Sync()
	c.SyncFixed()
}
