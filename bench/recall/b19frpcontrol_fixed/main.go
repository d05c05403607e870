// Project: fatedier/frp (server/control.go, server/proxy)
// Bug: Control.Close held ctl.mu while closing every registered proxy through
// the proxy.Proxy interface (TCPProxy.Close takes pxy.mu). A proxy that failed
// to get a work connection held its own pxy.mu and called back into its
// parent through the back-pointer (pxy.ctl.CloseProxy -> ctl.mu): AB-BA
// between Control.mu and the proxy's mutex.
// Fix: Control.Close snapshots and clears the proxy map under ctl.mu and
// closes the proxies after releasing it.

package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Proxy interface {
	Run() (remoteAddr string, err error)
	GetName() string
	Close()
}

type Control struct {
	runID     string
	mu        sync.RWMutex
	proxies   map[string]Proxy
	poolCount int
	closed    bool
}

func NewControl(runID string) *Control {
	return &Control{runID: runID, proxies: map[string]Proxy{}, poolCount: 1}
}

func (ctl *Control) RegisterProxy(pxy Proxy) {
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	ctl.proxies[pxy.GetName()] = pxy
}

// GetWorkConn stands in for waiting on a work connection from frpc.
func (ctl *Control) GetWorkConn() (string, error) {
	time.Sleep(40 * time.Millisecond)
	return "", errors.New("timeout trying to get work connection")
}

func (ctl *Control) CloseProxy(name string) {
	ctl.mu.Lock()
	defer ctl.mu.Unlock()
	if _, ok := ctl.proxies[name]; ok {
		delete(ctl.proxies, name)
	}
}

func (ctl *Control) Close() {
	ctl.mu.Lock()
	if ctl.closed {
		ctl.mu.Unlock()
		return
	}
	ctl.closed = true
	proxies := make([]Proxy, 0, len(ctl.proxies))
	for name, pxy := range ctl.proxies {
		proxies = append(proxies, pxy)
		delete(ctl.proxies, name)
	}
	ctl.mu.Unlock()

	for _, pxy := range proxies {
		pxy.Close()
	}
}

type TCPProxy struct {
	name       string
	remotePort int
	ctl        *Control

	mu        sync.Mutex
	listeners []string
	userConns int
	closed    bool
}

func (p *TCPProxy) GetName() string { return p.name }

func (p *TCPProxy) Run() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listeners = append(p.listeners, fmt.Sprintf(":%d", p.remotePort))
	return fmt.Sprintf(":%d", p.remotePort), nil
}

func (p *TCPProxy) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.listeners = nil
}

// handleUserConn is run for every accepted user connection.
func (p *TCPProxy) handleUserConn(remote string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.userConns++
	if _, err := p.ctl.GetWorkConn(); err != nil {
		fmt.Printf("[%s] user conn %s: %v, closing proxy\n", p.name, remote, err)
		p.ctl.CloseProxy(p.name)
		return
	}
}

func main() {
	ctl := NewControl("9f3a1c")
	pxy := &TCPProxy{name: "ssh", remotePort: 6000, ctl: ctl}
	if _, err := pxy.Run(); err != nil {
		panic(err)
	}
	ctl.RegisterProxy(pxy)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		pxy.handleUserConn("203.0.113.7:51234")
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		// frpc went away: the control's reader loop exits and closes it.
		ctl.Close()
	}()
	wg.Wait()
	fmt.Println("control closed")
}
