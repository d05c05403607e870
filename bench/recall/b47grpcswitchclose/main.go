// grpc/grpc-go between v1.37 and v1.38 (May 2021): clientconn.go
// (updateResolverState, applyServiceConfigAndBalancer, switchBalancer,
// removeAddrConn), balancer_conn_wrappers.go (ccBalancerWrapper.close,
// watcher, RemoveSubConn), xds clustermanager (bal.Close) and balancergroup
// (BalancerGroup.Close). Introduced by PR #4364 "grpc: call balancer.Close()
// before returning from ccBalancerWrapper.close()", fixed by its revert #4391.
//
// updateResolverState holds cc.mu for the whole update. An empty xDS service
// config switches cluster_manager to pick_first: switchBalancer, under cc.mu,
// closes the old wrapper, and since #4364 ccBalancerWrapper.close calls
// balancer.Close itself instead of leaving it to the watcher goroutine.
// cluster_manager closes its balancer group, which removes every SubConn
// through the balancer.ClientConn interface: RemoveSubConn ->
// ClientConn.removeAddrConn, which locks cc.mu again on the same goroutine.
// The resolver goroutine and every RPC hang. The revert lets the watcher
// close the balancer; it gets cc.mu once updateResolverState returns.
package main

import (
	"fmt"
	"sync"
)

var errConnDrain = fmt.Errorf("grpc: the connection is drained")

type (
	SubConn            interface{}
	BalancerClientConn interface { // balancer.ClientConn, implemented by ccBalancerWrapper
		NewSubConn(addrs []string) SubConn
		RemoveSubConn(SubConn)
	}
	Balancer interface {
		UpdateClientConnState(addrs []string)
		Close()
	}
	Builder interface {
		Build(cc BalancerClientConn) Balancer
	}
	addrConn          struct{ addrs []string }
	acBalancerWrapper struct{ ac *addrConn }
)

func (ac *addrConn) tearDown(err error) { _ = err }

func (acbw *acBalancerWrapper) getAddrConn() *addrConn { return acbw.ac }

type ccBalancerWrapper struct {
	cc         *ClientConn
	balancerMu sync.Mutex
	balancer   Balancer
	done       chan struct{} // grpcsync.Event fired by close
	exited     chan struct{} // closed when the watcher returns
	mu         sync.Mutex
	subConns   map[*acBalancerWrapper]struct{}
}

func newCCBalancerWrapper(cc *ClientConn, b Builder) *ccBalancerWrapper {
	ccb := &ccBalancerWrapper{cc: cc, done: make(chan struct{}), exited: make(chan struct{}), subConns: map[*acBalancerWrapper]struct{}{}}
	go ccb.watcher()
	ccb.balancer = b.Build(ccb)
	return ccb
}

// watcher tears the remaining SubConns down once the wrapper is done.
func (ccb *ccBalancerWrapper) watcher() {
	defer close(ccb.exited)
	<-ccb.done
	ccb.mu.Lock()
	scs := ccb.subConns
	ccb.subConns = nil
	ccb.mu.Unlock()
	for acbw := range scs {
		ccb.cc.removeAddrConn(acbw.getAddrConn(), errConnDrain)
	}
}

// close closes the balancer before returning, so shared xDS state is released.
func (ccb *ccBalancerWrapper) close() {
	ccb.balancerMu.Lock()
	ccb.balancer.Close()
	ccb.balancerMu.Unlock()
	close(ccb.done)
}

func (ccb *ccBalancerWrapper) NewSubConn(addrs []string) SubConn {
	acbw := &acBalancerWrapper{ac: ccb.cc.newAddrConn(addrs)}
	ccb.mu.Lock()
	ccb.subConns[acbw] = struct{}{}
	ccb.mu.Unlock()
	return acbw
}

func (ccb *ccBalancerWrapper) RemoveSubConn(sc SubConn) {
	acbw := sc.(*acBalancerWrapper)
	ccb.mu.Lock()
	defer ccb.mu.Unlock()
	if ccb.subConns == nil {
		return
	}
	delete(ccb.subConns, acbw)
	ccb.cc.removeAddrConn(acbw.getAddrConn(), errConnDrain)
}

type BalancerGroup struct {
	cc              BalancerClientConn
	incomingMu      sync.Mutex
	incomingStarted bool
	scToSubBalancer map[SubConn]string
}

func (bg *BalancerGroup) Close() {
	bg.incomingMu.Lock()
	if bg.incomingStarted {
		bg.incomingStarted = false
		// Also remove all SubConns.
		for sc := range bg.scToSubBalancer {
			bg.cc.RemoveSubConn(sc)
			delete(bg.scToSubBalancer, sc)
		}
	}
	bg.incomingMu.Unlock()
}

type clusterManagerBal struct{ bg *BalancerGroup } // xds_cluster_manager_experimental

func (b *clusterManagerBal) UpdateClientConnState(addrs []string) {
	b.bg.incomingMu.Lock()
	defer b.bg.incomingMu.Unlock()
	for _, a := range addrs {
		b.bg.scToSubBalancer[b.bg.cc.NewSubConn([]string{a})] = "cluster_1"
	}
}
func (b *clusterManagerBal) Close() { b.bg.Close() }

func (*clusterManagerBal) Build(cc BalancerClientConn) Balancer {
	return &clusterManagerBal{bg: &BalancerGroup{cc: cc, incomingStarted: true, scToSubBalancer: map[SubConn]string{}}}
}

type pickfirst struct{} // builder and balancer

func (pickfirst) Build(BalancerClientConn) Balancer { return pickfirst{} }
func (pickfirst) UpdateClientConnState([]string)    {}
func (pickfirst) Close()                            {}

var registry = map[string]Builder{"pick_first": pickfirst{}, "xds_cluster_manager_experimental": &clusterManagerBal{}}

type ClientConn struct {
	mu              sync.RWMutex
	conns           map[*addrConn]struct{}
	curBalancerName string
	balancerWrapper *ccBalancerWrapper
}

func (cc *ClientConn) newAddrConn(addrs []string) *addrConn {
	ac := &addrConn{addrs: addrs}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.conns[ac] = struct{}{}
	return ac
}

func (cc *ClientConn) removeAddrConn(ac *addrConn, err error) {
	cc.mu.Lock()
	delete(cc.conns, ac)
	cc.mu.Unlock()
	ac.tearDown(err)
}

func (cc *ClientConn) switchBalancer(name string) {
	if cc.balancerWrapper != nil {
		cc.balancerWrapper.close()
	}
	cc.curBalancerName = name
	cc.balancerWrapper = newCCBalancerWrapper(cc, registry[name])
}

func (cc *ClientConn) applyServiceConfigAndBalancer(lbPolicy string) {
	if lbPolicy == "" {
		lbPolicy = "pick_first" // empty service config
	}
	cc.switchBalancer(lbPolicy)
}

func (cc *ClientConn) updateResolverState(addrs []string, lbPolicy string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.applyServiceConfigAndBalancer(lbPolicy)
	cc.balancerWrapper.balancer.UpdateClientConnState(addrs)
}

func main() {
	cc := &ClientConn{conns: map[*addrConn]struct{}{}}
	cc.updateResolverState(nil, "xds_cluster_manager_experimental")
	cc.balancerWrapper.balancer.UpdateClientConnState([]string{"10.0.0.1:443", "10.0.0.2:443"}) // first xDS update
	old := cc.balancerWrapper
	cc.updateResolverState([]string{"10.0.0.3:443"}, "") // the xDS resolver pushes an empty service config
	<-old.exited
	fmt.Println("switched to", cc.curBalancerName, "- addrConns left:", len(cc.conns))
}
