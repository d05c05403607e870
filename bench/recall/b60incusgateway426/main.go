// Project: lxc/incus (code inherited from LXD's cluster gateway), incusd 2025-2026.
// Files/functions: internal/server/cluster/gateway.go (Gateway.DialFunc returned
// closure, dqliteNetworkDial, Gateway.heartbeat, triggerUpdate).
// Fix: lxc/incus PR #4038 "incusd/cluster: Don't run update trigger under the gateway lock".
//
// Every dqlite connection to the raft leader goes through the dial function
// returned by Gateway.DialFunc. The closure read-locks g.lock for the whole
// dial (defer g.lock.RUnlock()) so that memoryDial cannot change under it,
// and, when the node is clustered, calls dqliteNetworkDial. That helper
// sends the HTTP upgrade request to /internal/database; when the remote
// member answers 426 Upgrade Required (this member runs an older dqlite
// protocol than the rest of the cluster, the normal state in the middle of
// a rolling upgrade), it write-locks g.lock to check and set
// g.upgradeTriggered and to run triggerUpdate(). The same goroutine still
// holds the read lock taken by the DialFunc closure, so the Lock never
// returns: the daemon's database connection attempt hangs forever and with
// it every API request waiting for the cluster database. The fix stops
// running the update trigger under the gateway lock; the fixed twin here
// reads memoryDial under the read lock and dials after releasing it, so the
// 426 path can take the lock.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

const dqliteVersion = 1

type DialFunc func(ctx context.Context, address string) (net.Conn, error)

type Gateway struct {
	ctx              context.Context
	lock             sync.RWMutex
	memoryDial       DialFunc
	upgradeTriggered bool
	roundTrip        func(req *http.Request) (*http.Response, error)
}

var triggerUpdate = func() error {
	fmt.Println("triggering update of the incus package")
	return nil
}

func (g *Gateway) heartbeat(ctx context.Context) {}

// DialFunc returns a dial function that can be used to connect to one of
// the dqlite nodes.
func (g *Gateway) DialFunc() DialFunc {
	return func(ctx context.Context, address string) (net.Conn, error) {
		g.lock.RLock()
		defer g.lock.RUnlock()

		// Memory connection.
		if g.memoryDial != nil {
			return g.memoryDial(ctx, address)
		}

		conn, err := dqliteNetworkDial(ctx, "dqlite", address, g)
		if err != nil {
			return nil, err
		}

		go g.heartbeat(g.ctx)
		return conn, nil
	}
}

func dqliteNetworkDial(ctx context.Context, name string, addr string, g *Gateway) (net.Conn, error) {
	request := &http.Request{
		Method:     "POST",
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     make(http.Header),
		URL:        &url.URL{Scheme: "http", Path: "/internal/database", Host: addr},
		Host:       addr,
	}
	request.Header.Set("Upgrade", name)
	request.Header.Set("X-Dqlite-Version", fmt.Sprintf("%d", dqliteVersion))
	request = request.WithContext(ctx)

	response, err := g.roundTrip(request)
	if err != nil {
		return nil, err
	}
	defer response.Body.Close()

	// If the remote server has detected that we are out of date, let's
	// trigger an upgrade.
	if response.StatusCode == http.StatusUpgradeRequired {
		g.lock.Lock()
		defer g.lock.Unlock()
		if !g.upgradeTriggered {
			if err := triggerUpdate(); err == nil {
				g.upgradeTriggered = true
			}
		}
		return nil, errors.New("Upgrade needed")
	}
	if response.StatusCode != http.StatusSwitchingProtocols {
		return nil, fmt.Errorf("Dialing failed: expected status code 101 got %d", response.StatusCode)
	}
	return nil, errors.New("not reached in this reproduction")
}

// remoteNewerMember answers like a member that already runs a newer dqlite.
func remoteNewerMember(req *http.Request) (*http.Response, error) {
	raw := "HTTP/1.1 426 Upgrade Required\r\nContent-Length: 27\r\n\r\n426 dqlite version too old "
	return http.ReadResponse(bufio.NewReader(strings.NewReader(raw)), req)
}

func main() {
	g := &Gateway{ctx: context.Background(), roundTrip: remoteNewerMember}
	dial := g.DialFunc()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := dial(ctx, "10.0.0.2:8443")
	fmt.Println("dial:", err)
	fmt.Println("exited cleanly")
}
