// Project: nats-server v2 (server/server.go, server/route.go, server/leafnode.go, server/client.go)
// Issue: nats-io/nats-server #1543 "Server can deadlock when solicited leafnode
// connection is closed on update", fixed by PR #1545 (code reconstructed from
// the stack trace; bodies trimmed)
//
// With dynamic cluster names, a route's INFO can carry a different cluster
// name; processRouteInfo then calls Server.setClusterName, which takes the
// server lock s.mu (line 134) and, still holding it, calls
// updatedSolicitedLeafnodes. That closes every solicited leafnode connection
// (cluster name conflict) via client.closeConnection -> client.teardownConn ->
// Server.removeClient -> (kind LEAF) Server.removeLeafNodeConnection, which
// locks s.mu again (line 213). sync.Mutex is not reentrant, so the readLoop
// goroutine deadlocks on the lock it already holds.
//
// main builds a server with one solicited leafnode and feeds a route INFO
// with a new cluster name through processRouteInfo.
package main

import (
	"fmt"
	"strings"
	"sync"
)

type ClosedState int

const (
	ClientClosed ClosedState = iota + 1
	ClusterNameConflict
)

const (
	CLIENT = iota
	ROUTER
	GATEWAY
	LEAF
)

type clientFlag uint16

const closeConnection clientFlag = 1 << 0

func (cf *clientFlag) set(c clientFlag)       { *cf |= c }
func (cf clientFlag) isSet(c clientFlag) bool { return cf&c != 0 }

type Info struct {
	ID      string `json:"server_id"`
	Cluster string `json:"cluster,omitempty"`
	Dynamic bool   `json:"cluster_dynamic,omitempty"`
}

type leafNodeCfg struct {
	URLs []string
}

type leaf struct {
	// remote is set for solicited leafnodes.
	remote *leafNodeCfg
}

type netConn interface {
	Close() error
}

type client struct {
	mu    sync.Mutex
	kind  int
	srv   *Server
	cid   uint64
	nc    netConn
	flags clientFlag
	leaf  *leaf
	route *route
}

type route struct {
	remoteID string
}

type Server struct {
	mu        sync.Mutex
	info      Info
	routeInfo Info
	clients   map[uint64]*client
	routes    map[uint64]*client
	leafs     map[uint64]*client
	cproto    int64

	infoJSON      []byte
	routeInfoJSON []byte

	dynamicCluster bool
}

// --- route.go ---

// processRouteInfo is called from the route's readLoop.
func (c *client) processRouteInfo(info *Info) {
	c.mu.Lock()
	s := c.srv
	clusterName := s.ClusterName()
	if info.Cluster != "" && info.Cluster != clusterName {
		c.mu.Unlock()
		// If we are dynamic we may update our cluster name.
		// Use other if remote is non dynamic or their name is "bigger"
		if s.isClusterNameDynamic() && (!info.Dynamic || (strings.Compare(clusterName, info.Cluster) < 0)) {
			s.setClusterName(info.Cluster)
			s.removeAllRoutesExcept(c)
			c.mu.Lock()
		} else {
			c.closeConnection(ClusterNameConflict)
			return
		}
	}
	c.route.remoteID = info.ID
	c.mu.Unlock()
}

// --- server.go ---

func (s *Server) ClusterName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info.Cluster
}

func (s *Server) isClusterNameDynamic() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dynamicCluster
}

func (s *Server) setClusterName(name string) {
	s.mu.Lock()
	s.info.Cluster = name
	s.routeInfo.Cluster = name
	// Regenerate the info byte array
	s.generateRouteInfoJSON()
	// Need to close solicited leaf nodes.
	s.updatedSolicitedLeafnodes()
	s.mu.Unlock()
	fmt.Printf("Cluster name updated to %s\n", name)
}

func (s *Server) generateRouteInfoJSON() {
	s.routeInfoJSON = []byte(fmt.Sprintf("INFO {\"server_id\":%q,\"cluster\":%q}\r\n", s.routeInfo.ID, s.routeInfo.Cluster))
}

func (s *Server) removeAllRoutesExcept(c *client) {
	s.mu.Lock()
	routes := make([]*client, 0, len(s.routes))
	for _, r := range s.routes {
		if r != c {
			routes = append(routes, r)
		}
	}
	s.mu.Unlock()
	for _, r := range routes {
		r.closeConnection(ClusterNameConflict)
	}
}

func (s *Server) removeClient(c *client) {
	// kind is immutable, so can check without lock
	switch c.kind {
	case CLIENT:
		c.mu.Lock()
		cid := c.cid
		c.mu.Unlock()

		s.mu.Lock()
		delete(s.clients, cid)
		s.cproto--
		s.mu.Unlock()
	case ROUTER:
		s.removeRoute(c)
	case LEAF:
		s.removeLeafNodeConnection(c)
	}
}

func (s *Server) removeRoute(c *client) {
	c.mu.Lock()
	cid := c.cid
	c.mu.Unlock()
	s.mu.Lock()
	delete(s.routes, cid)
	s.mu.Unlock()
}

// --- leafnode.go ---

func (c *client) isSolicitedLeafNode() bool {
	return c.kind == LEAF && c.leaf.remote != nil
}

// Called when our cluster name changed. Lock should be held.
func (s *Server) updatedSolicitedLeafnodes() {
	for _, c := range s.leafs {
		c.mu.Lock()
		shouldClose := c.isSolicitedLeafNode()
		c.mu.Unlock()
		if shouldClose {
			c.closeConnection(ClusterNameConflict)
		}
	}
}

func (s *Server) removeLeafNodeConnection(c *client) {
	c.mu.Lock()
	cid := c.cid
	c.mu.Unlock()
	s.mu.Lock()
	delete(s.leafs, cid)
	s.mu.Unlock()
}

// --- client.go ---

func (c *client) closeConnection(reason ClosedState) {
	c.mu.Lock()
	if c.nc == nil || c.flags.isSet(closeConnection) {
		c.mu.Unlock()
		return
	}
	c.flags.set(closeConnection)
	c.nc.Close()
	c.mu.Unlock()

	c.teardownConn()
}

func (c *client) teardownConn() {
	c.mu.Lock()
	srv := c.srv
	c.nc = nil
	c.mu.Unlock()

	if srv != nil {
		srv.removeClient(c)
	}
}

type fakeConn struct{ name string }

func (f *fakeConn) Close() error { return nil }

func main() {
	s := &Server{
		info:           Info{ID: "S1", Cluster: "aZbQ2F"},
		routeInfo:      Info{ID: "S1", Cluster: "aZbQ2F"},
		clients:        map[uint64]*client{},
		routes:         map[uint64]*client{},
		leafs:          map[uint64]*client{},
		dynamicCluster: true,
	}
	rc := &client{kind: ROUTER, srv: s, cid: 1, nc: &fakeConn{"route"}, route: &route{}}
	lc := &client{kind: LEAF, srv: s, cid: 2, nc: &fakeConn{"leaf"}, leaf: &leaf{remote: &leafNodeCfg{URLs: []string{"nats-leaf://hub:7422"}}}}
	s.routes[rc.cid] = rc
	s.leafs[lc.cid] = lc

	// INFO from the route, carrying a "bigger" dynamic cluster name.
	rc.processRouteInfo(&Info{ID: "S2", Cluster: "zQ5dLk", Dynamic: true})
	fmt.Println("cluster:", s.ClusterName(), "leafs:", len(s.leafs))
}
