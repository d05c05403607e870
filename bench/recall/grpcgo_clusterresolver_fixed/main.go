// Fixed twin of grpcgo_clusterresolver: grpc/grpc-go#5588 swaps out childrenMap under rr.mu and calls stop() on the children after unlocking.

package main

import (
	"fmt"
	"sync"
	"time"
)

type clientConn interface{ UpdateState(addrs []string) error }

type topLevelResolver interface{ onUpdate() }

type dnsResolver struct {
	host     string
	cc       clientConn
	rn, done chan struct{}
	wg       sync.WaitGroup
}

func (d *dnsResolver) watcher() {
	defer d.wg.Done()
	for {
		time.Sleep(20 * time.Millisecond) // net.Resolver.LookupHost
		d.cc.UpdateState([]string{d.host + ":443"})
		select {
		case <-d.done:
			return
		case <-d.rn:
		}
	}
}

func (d *dnsResolver) Close() {
	close(d.done)
	d.wg.Wait()
}

type dnsDiscoveryMechanism struct {
	topLevelResolver topLevelResolver
	dnsR             *dnsResolver
	mu               sync.Mutex
	addrs            []string
	updateReceived   bool
}

func (dr *dnsDiscoveryMechanism) UpdateState(addrs []string) error {
	dr.mu.Lock()
	dr.addrs, dr.updateReceived = addrs, true
	dr.mu.Unlock()
	dr.topLevelResolver.onUpdate()
	return nil
}

func (dr *dnsDiscoveryMechanism) stop() { dr.dnsR.Close() }

type resourceResolver struct {
	updateChannel chan []string
	mu            sync.Mutex
	childrenMap   map[string]*dnsDiscoveryMechanism
}

func (rr *resourceResolver) updateMechanisms(targets []string) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for _, t := range targets {
		dr := &dnsDiscoveryMechanism{topLevelResolver: rr}
		dr.dnsR = &dnsResolver{host: t, cc: dr, rn: make(chan struct{}, 1), done: make(chan struct{})}
		dr.dnsR.wg.Add(1)
		go dr.dnsR.watcher()
		rr.childrenMap[t] = dr
	}
}

func (rr *resourceResolver) stop() {
	rr.mu.Lock()
	cm := rr.childrenMap
	rr.childrenMap = make(map[string]*dnsDiscoveryMechanism)
	rr.mu.Unlock()
	for _, r := range cm {
		r.stop()
	}
}

func (rr *resourceResolver) generateLocked() {
	var ret []string
	for _, r := range rr.childrenMap {
		r.mu.Lock()
		u, ok := r.addrs, r.updateReceived
		r.mu.Unlock()
		if !ok {
			return
		}
		ret = append(ret, u...)
	}
	select {
	case <-rr.updateChannel:
	default:
	}
	rr.updateChannel <- ret
}

func (rr *resourceResolver) onUpdate() {
	rr.mu.Lock()
	rr.generateLocked()
	rr.mu.Unlock()
}

func main() {
	rr := &resourceResolver{updateChannel: make(chan []string, 1), childrenMap: map[string]*dnsDiscoveryMechanism{}}
	rr.updateMechanisms([]string{"backend.example.com"})
	time.Sleep(5 * time.Millisecond)
	rr.stop()
	fmt.Println("cluster resolver stopped")
}
