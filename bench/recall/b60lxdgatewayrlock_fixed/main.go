// Project: canonical/lxd, LXD 5.0/5.1 era (April 2022).
// Files/functions: lxd/cluster/gateway.go (Gateway.HandlerFuncs "database"
// handler closure, Gateway.LeaderAddress, Gateway.Shutdown, Gateway.Sync),
// lxd/cluster/tls.go (tlsCheckCert), trustedCerts callback from the daemon.
// Fix: canonical/lxd PR #10306 "Recursive rlock shutdown".
//
// The /internal/database endpoint served by the gateway is a closure
// returned by HandlerFuncs. It read-locks g.lock for the whole request
// (defer g.lock.RUnlock()), checks the client certificate against the
// trusted certificates returned by the daemon's trustedCerts callback and
// the dqlite version header, and for a GET (a cluster member asking who the
// raft leader is) calls g.LeaderAddress(), which read-locks g.lock again.
// When the daemon shuts the gateway down at that moment, Gateway.Shutdown
// syncs and closes the dqlite server and then write-locks g.lock to clear
// memoryDial. The pending writer makes the handler's second RLock wait, and
// the writer waits for the handler's first read lock: the handler goroutine
// and the shutdown both hang. The fix stops holding the gateway lock across
// the call to LeaderAddress.
package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

const dqliteVersion = 1

type RaftRole int

const RaftVoter RaftRole = 0

type NodeInfo struct {
	ID      uint64
	Address string
	Role    RaftRole
}

type dqliteServer struct{ leader string }

func (s *dqliteServer) Close() error { return nil }

type Gateway struct {
	ctx        context.Context
	info       *NodeInfo
	server     *dqliteServer
	memoryDial func(ctx context.Context, address string) (interface{}, error)
	lock       sync.RWMutex
}

func tlsCheckCert(r *http.Request, trusted map[string]x509.Certificate) bool {
	return len(trusted) > 0
}

func (g *Gateway) HandlerFuncs(trustedCerts func() map[string]x509.Certificate) map[string]http.HandlerFunc {
	database := func(w http.ResponseWriter, r *http.Request) {
		g.lock.RLock()
		defer g.lock.RUnlock()

		if !tlsCheckCert(r, trustedCerts()) {
			http.Error(w, "403 invalid client certificate", http.StatusForbidden)
			return
		}
		if r.Header.Get("X-Dqlite-Version") != fmt.Sprint(dqliteVersion) {
			http.Error(w, "426 dqlite version too old ", http.StatusUpgradeRequired)
			return
		}
		if g.info == nil || g.server == nil || g.memoryDial != nil {
			http.Error(w, "503 Node is not part of the raft cluster", http.StatusServiceUnavailable)
			return
		}
		// Handle leader address requests.
		if r.Method == "GET" {
			// LeaderAddress takes the gateway lock itself: don't hold it.
			g.lock.RUnlock()
			leader, err := g.LeaderAddress()
			g.lock.RLock()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			fmt.Fprintf(w, "{\"leader\": %q}\n", leader)
			return
		}
	}
	return map[string]http.HandlerFunc{"/internal/database": database}
}

// LeaderAddress returns the address of the current raft leader.
func (g *Gateway) LeaderAddress() (string, error) {
	g.lock.RLock()
	defer g.lock.RUnlock()
	if g.memoryDial != nil {
		return "", errors.New("Node is not clustered")
	}
	if g.server != nil && g.info.Role == RaftVoter {
		return g.server.leader, nil
	}
	return "", errors.New("No raft leader")
}

func (g *Gateway) Sync() {}

func (g *Gateway) Shutdown() error {
	var err error
	if g.server != nil {
		if g.info.Role == RaftVoter {
			g.Sync()
		}
		err = g.server.Close()
		// Unset the memory dial, since Shutdown() is also called for
		// switching between in-memory and network mode.
		g.lock.Lock()
		g.memoryDial = nil
		g.lock.Unlock()
	}
	return err
}

func main() {
	g := &Gateway{
		ctx:    context.Background(),
		info:   &NodeInfo{ID: 1, Address: "10.0.0.1:8443", Role: RaftVoter},
		server: &dqliteServer{leader: "10.0.0.1:8443"},
	}
	trustedCerts := func() map[string]x509.Certificate {
		time.Sleep(50 * time.Millisecond) // loaded from the cluster database
		return map[string]x509.Certificate{"member2": {}}
	}
	handler := g.HandlerFuncs(trustedCerts)["/internal/database"]

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		req := httptest.NewRequest("GET", "/internal/database", nil)
		req.Header.Set("X-Dqlite-Version", fmt.Sprint(dqliteVersion))
		rec := httptest.NewRecorder()
		handler(rec, req)
		fmt.Print(rec.Body.String())
	}()
	time.Sleep(20 * time.Millisecond)
	go func() { // lxd shutdown
		defer wg.Done()
		g.Shutdown()
	}()
	wg.Wait()
	fmt.Println("exited cleanly")
}
