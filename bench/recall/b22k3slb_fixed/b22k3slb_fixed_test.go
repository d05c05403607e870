// Project: k3s-io/k3s (pkg/agent/loadbalancer)
// Bug: LoadBalancer.dialContext holds lb.mutex.RLock() for the whole dial loop.
//      When dialing the current server fails it calls lb.nextServer() to rotate
//      to another apiserver, and nextServer takes lb.mutex.Lock(). A write lock
//      requested while the same goroutine holds the read lock never succeeds.
// Fix: nextServer is documented as "must be called with the lock held" and no
//      longer locks; dialContext holds the write lock while it may rotate servers.

package b22k3slb_fixed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

type server struct {
	address     string
	healthy     bool
	connections map[net.Conn]struct{}
}

func (s *server) healthCheck() bool { return s.healthy }

type LoadBalancer struct {
	mutex                sync.RWMutex
	serviceName          string
	localAddress         string
	defaultServerAddress string
	ServerAddresses      []string
	randomServers        []string
	servers              map[string]*server
	currentServerAddress string
	nextServerIndex      int
	dial                 func(ctx context.Context, network, address string) (net.Conn, error)
	logf                 func(format string, args ...any)
}

func New(name string, addrs []string, dial func(ctx context.Context, network, address string) (net.Conn, error)) *LoadBalancer {
	lb := &LoadBalancer{
		serviceName:     name,
		localAddress:    "127.0.0.1:6444",
		ServerAddresses: addrs,
		servers:         map[string]*server{},
		dial:            dial,
		logf:            func(string, ...any) {},
	}
	lb.setServers(addrs)
	return lb
}

func (lb *LoadBalancer) setServers(addrs []string) bool {
	lb.mutex.Lock()
	defer lb.mutex.Unlock()
	lb.randomServers = append([]string(nil), addrs...)
	for _, a := range addrs {
		if _, ok := lb.servers[a]; !ok {
			lb.servers[a] = &server{address: a, healthy: true, connections: map[net.Conn]struct{}{}}
		}
	}
	if lb.currentServerAddress == "" && len(addrs) > 0 {
		lb.currentServerAddress = addrs[0]
		lb.defaultServerAddress = addrs[0]
	}
	lb.nextServerIndex = 1
	return true
}

func (lb *LoadBalancer) Update(addrs []string) {
	if lb.setServers(addrs) {
		lb.logf("Updated load balancer %s server addresses -> %v", lb.serviceName, addrs)
	}
}

// nextServer must be called with lb.mutex held for writing.
func (lb *LoadBalancer) nextServer(failedServer string) (string, error) {
	lb.logf("Stopped tunnel to %s", failedServer)
	if len(lb.randomServers) == 0 {
		return "", errors.New("No servers in load balancer proxy list")
	}
	if len(lb.randomServers) == 1 {
		return lb.currentServerAddress, nil
	}
	if failedServer != lb.currentServerAddress {
		return lb.currentServerAddress, nil
	}
	if lb.nextServerIndex >= len(lb.randomServers) {
		lb.nextServerIndex = 0
	}
	lb.currentServerAddress = lb.randomServers[lb.nextServerIndex]
	lb.nextServerIndex++
	return lb.currentServerAddress, nil
}

func (lb *LoadBalancer) dialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	lb.mutex.Lock()
	defer lb.mutex.Unlock()

	startIndex := lb.nextServerIndex
	for {
		targetServer := lb.currentServerAddress
		s := lb.servers[targetServer]
		if s != nil && s.healthCheck() {
			conn, err := lb.dial(ctx, network, targetServer)
			if err == nil {
				return conn, nil
			}
			lb.logf("Dial error from load balancer %s: %v", lb.serviceName, err)
		}
		newServer, err := lb.nextServer(targetServer)
		if err != nil {
			return nil, err
		}
		if targetServer != newServer {
			lb.logf("Failed over to new server for load balancer %s: %s -> %s", lb.serviceName, targetServer, newServer)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if lb.nextServerIndex == startIndex {
			return nil, errors.New("all servers failed")
		}
	}
}

func TestProbe(t *testing.T) {
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		if address == "10.0.0.1:6443" {
			return nil, fmt.Errorf("dial tcp %s: connect: connection refused", address)
		}
		c1, c2 := net.Pipe()
		go func() { time.Sleep(10 * time.Millisecond); c2.Close() }()
		return c1, nil
	}
	lb := New("k3s-agent-load-balancer", []string{"10.0.0.1:6443", "10.0.0.2:6443"}, dial)
	lb.logf = t.Logf

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := lb.dialContext(ctx, "tcp", lb.localAddress)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	conn.Close()
}
