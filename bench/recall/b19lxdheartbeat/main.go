// Project: lxc/lxd (lxd/cluster gateway heartbeat)
// Bug: Gateway.heartbeat held g.lock while invoking the hook registered with
// Gateway.HeartbeatNodeHook (daemon.nodeRefreshTask), and that hook takes
// d.clusterMembershipMutex. Concurrently a member-join path held
// clusterMembershipMutex and called gateway.IsDqliteNode(), which takes
// g.lock.RLock: AB-BA through a setter-registered callback.
// Fix: copy the hook under g.lock and invoke it after releasing the lock.

package main

import (
	"fmt"
	"sync"
	"time"
)

type APIHeartbeatMember struct {
	ID      int64
	Name    string
	Address string
	Online  bool
}

type APIHeartbeat struct {
	Members map[int64]APIHeartbeatMember
	Version int
	Time    time.Time
}

type Gateway struct {
	lock              sync.RWMutex
	address           string
	memberConfigRoles []string
	heartbeatNodeHook func(*APIHeartbeat)
	heartbeatCount    int
}

// HeartbeatNodeHook registers a function called after each heartbeat round.
func (g *Gateway) HeartbeatNodeHook(f func(*APIHeartbeat)) {
	g.lock.Lock()
	defer g.lock.Unlock()
	g.heartbeatNodeHook = f
}

func (g *Gateway) IsDqliteNode() bool {
	g.lock.RLock()
	defer g.lock.RUnlock()
	for _, r := range g.memberConfigRoles {
		if r == "database" {
			return true
		}
	}
	return false
}

func (g *Gateway) heartbeat(members []APIHeartbeatMember) {
	g.lock.Lock()
	defer g.lock.Unlock()

	hb := &APIHeartbeat{Members: map[int64]APIHeartbeatMember{}, Time: time.Now()}
	for _, m := range members {
		m.Online = true
		hb.Members[m.ID] = m
	}
	g.heartbeatCount++
	hb.Version = g.heartbeatCount

	if g.heartbeatNodeHook != nil {
		g.heartbeatNodeHook(hb)
	}
}

type Daemon struct {
	gateway                *Gateway
	clusterMembershipMutex sync.RWMutex
	members                map[int64]APIHeartbeatMember
	serverName             string
}

func (d *Daemon) nodeRefreshTask(hb *APIHeartbeat) {
	d.clusterMembershipMutex.Lock()
	defer d.clusterMembershipMutex.Unlock()
	for id, m := range hb.Members {
		d.members[id] = m
	}
}

// loadMemberTLS stands in for reading cluster certificates while joining.
func (d *Daemon) loadMemberTLS() { time.Sleep(50 * time.Millisecond) }

func (d *Daemon) clusterMemberJoin(m APIHeartbeatMember) error {
	d.clusterMembershipMutex.Lock()
	defer d.clusterMembershipMutex.Unlock()
	d.loadMemberTLS()
	if !d.gateway.IsDqliteNode() {
		return fmt.Errorf("member %q: this node is not a database node", m.Name)
	}
	d.members[m.ID] = m
	return nil
}

func main() {
	g := &Gateway{address: "10.0.0.1:8443", memberConfigRoles: []string{"database"}}
	d := &Daemon{gateway: g, members: map[int64]APIHeartbeatMember{}, serverName: "node1"}
	g.HeartbeatNodeHook(d.nodeRefreshTask)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := d.clusterMemberJoin(APIHeartbeatMember{ID: 3, Name: "node3", Address: "10.0.0.3:8443"}); err != nil {
			fmt.Println(err)
		}
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		g.heartbeat([]APIHeartbeatMember{
			{ID: 1, Name: "node1", Address: "10.0.0.1:8443"},
			{ID: 2, Name: "node2", Address: "10.0.0.2:8443"},
		})
	}()
	wg.Wait()
	fmt.Println("members:", len(d.members))
}
