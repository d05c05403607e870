// Project: etcd (clientv3, health_balancer.go)
// Bug: healthBalancer.Up runs mayPin (health check + unhealthy bookkeeping under
// unhealthyMu) while holding b.mu, whereas hostPortError, called from the retry
// path, holds unhealthyMu and then reads the endpoint map under b.mu.RLock.
// Fix: evaluate mayPin before taking b.mu in Up, as upstream does.
package main

import (
	"errors"
	"fmt"
	"log"
	"net/url"
	"sync"
	"time"
)

type Address struct {
	Addr string
}

type healthCheckFunc func(ep string) (bool, error)

type healthBalancer struct {
	healthCheck        healthCheckFunc
	healthCheckTimeout time.Duration

	unhealthyMu        sync.RWMutex
	unhealthyHostPorts map[string]time.Time

	mu          sync.RWMutex
	addrs       []Address
	eps         []string
	hostPort2ep map[string]string
	pinAddr     string
	upc         chan struct{}
	downc       chan struct{}
}

func newHealthBalancer(eps []string, timeout time.Duration, hc healthCheckFunc) *healthBalancer {
	b := &healthBalancer{
		healthCheck:        hc,
		healthCheckTimeout: timeout,
		unhealthyHostPorts: make(map[string]time.Time),
		hostPort2ep:        make(map[string]string),
		upc:                make(chan struct{}),
		downc:              make(chan struct{}),
		eps:                eps,
	}
	for _, ep := range eps {
		u, err := url.Parse(ep)
		if err != nil {
			continue
		}
		b.addrs = append(b.addrs, Address{Addr: u.Host})
		b.hostPort2ep[u.Host] = ep
	}
	return b
}

func (b *healthBalancer) endpoint(hostPort string) string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.hostPort2ep[hostPort]
}

func (b *healthBalancer) hostPortError(hostPort string, err error) {
	b.unhealthyMu.Lock()
	defer b.unhealthyMu.Unlock()
	ep := b.endpoint(hostPort)
	if ep == "" {
		return
	}
	b.unhealthyHostPorts[hostPort] = time.Now()
	log.Printf("clientv3/balancer: marking %q as unhealthy (%q)", ep, err.Error())
}

func (b *healthBalancer) removeUnhealthy(hostPort, msg string) {
	b.unhealthyMu.Lock()
	delete(b.unhealthyHostPorts, hostPort)
	b.unhealthyMu.Unlock()
	log.Printf("clientv3/balancer: removed %q from unhealthy endpoints (%q)", hostPort, msg)
}

func (b *healthBalancer) mayPin(addr Address) bool {
	b.unhealthyMu.RLock()
	unhealthyCnt := len(b.unhealthyHostPorts)
	failedTime, bad := b.unhealthyHostPorts[addr.Addr]
	b.unhealthyMu.RUnlock()

	skip := len(b.addrs) == 1 || unhealthyCnt == 0 || len(b.addrs) == unhealthyCnt
	if skip || !bad {
		if ok, _ := b.healthCheck(addr.Addr); ok {
			b.removeUnhealthy(addr.Addr, "health check success")
			return true
		}
		b.hostPortError(addr.Addr, errors.New("health check failed"))
		return false
	}
	if time.Since(failedTime) < b.healthCheckTimeout {
		return false
	}
	return true
}

func (b *healthBalancer) Up(addr Address) func(error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.mayPin(addr) {
		return func(err error) {}
	}
	if b.pinAddr != "" {
		return func(err error) {}
	}
	close(b.upc)
	b.downc = make(chan struct{})
	b.pinAddr = addr.Addr
	log.Printf("clientv3/balancer: pin %q", addr.Addr)
	return func(err error) {
		b.mu.Lock()
		b.upc = make(chan struct{})
		close(b.downc)
		b.pinAddr = ""
		b.mu.Unlock()
	}
}

func (b *healthBalancer) pinned() string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.pinAddr
}

func main() {
	// Health check RPC to the member takes a while (slow member, grpc health service).
	hc := func(ep string) (bool, error) {
		time.Sleep(100 * time.Millisecond)
		return true, nil
	}
	b := newHealthBalancer([]string{"http://10.0.0.1:2379", "http://10.0.0.2:2379"}, 3*time.Second, hc)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		// grpc connects to the first member and reports it up.
		b.Up(Address{Addr: "10.0.0.1:2379"})
	}()
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		// A Range RPC on the other member failed; the retry interceptor reports it.
		b.hostPortError("10.0.0.2:2379", errors.New("rpc error: code = Unavailable"))
	}()
	wg.Wait()
	fmt.Println("pinned:", b.pinned())
}
