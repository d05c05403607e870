// Project: moby/libnetwork (vendored in Docker 20.10.x, e.g. 20.10.6).
// Files/functions: network.go (network.ResolveName, network.getSvcRecords,
// network.ID, network.getController), sandbox_dns_unix.go / sandbox.go
// (sandbox.ResolveName, sandbox.deleteHostsEntries), endpoint.go
// (endpoint.sbLeave).
// Issue moby/libnetwork#2632 "Name resolution stuck due to deadlock between
// different network struct methods"; fixed by moby/libnetwork#2633 "Enforce
// order of lock acquisitions on network/controller, fixes #2632".
//
// The embedded DNS resolver answers a query through sandbox.ResolveName,
// which walks the sandbox endpoints and calls network.ResolveName. That
// method locks the controller and then, inside the map index expression
// c.svcRecords[n.ID()], calls network.ID(), which locks the network. A
// container leaving the network goes through endpoint.sbLeave ->
// network.getSvcRecords, which locks the network first, reads the endpoint
// name and then locks the controller to read the service records. One
// goroutine holds the controller and waits for the network, the other holds
// the network and waits for the controller, and name resolution plus every
// docker command touching the controller hangs. The fix reads n.ID() into a
// local variable before taking the controller lock in ResolveName (and the
// sibling HandleQueryResp/ResolveIP/ResolveService), so the controller lock
// is never held while the network lock is requested.
package main

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

type svcMapEntry struct {
	ip        string
	serviceID string
}

type svcInfo struct {
	svcMap map[string][]svcMapEntry
}

type controller struct {
	sync.Mutex
	svcRecords map[string]svcInfo
}

type network struct {
	sync.Mutex
	ctrlr      *controller
	id         string
	name       string
	enableIPv6 bool
}

func (n *network) ID() string {
	n.Lock()
	defer n.Unlock()
	return n.id
}

func (n *network) getController() *controller {
	n.Lock()
	defer n.Unlock()
	return n.ctrlr
}

func (n *network) ResolveName(req string, ipType int) ([]net.IP, bool) {
	c := n.getController()
	networkID := n.ID()
	time.Sleep(50 * time.Millisecond)
	c.Lock()
	defer c.Unlock()
	sr, ok := c.svcRecords[networkID]
	if !ok {
		return nil, false
	}
	req = strings.TrimSuffix(req, ".")
	ipSet, ok := sr.svcMap[req]
	if ok && len(ipSet) > 0 {
		var ipLocal []net.IP
		for _, e := range ipSet {
			ipLocal = append(ipLocal, net.ParseIP(e.ip))
		}
		return ipLocal, true
	}
	return nil, false
}

type etchostsRecord struct {
	Hosts string
	IP    string
}

type endpoint struct {
	sync.Mutex
	name    string
	network *network
}

func (ep *endpoint) Name() string {
	ep.Lock()
	defer ep.Unlock()
	return ep.name
}

func (ep *endpoint) getNetwork() *network {
	ep.Lock()
	defer ep.Unlock()
	return ep.network
}

func (n *network) getSvcRecords(ep *endpoint) []etchostsRecord {
	n.Lock()
	defer n.Unlock()
	if ep == nil {
		return nil
	}
	var recs []etchostsRecord
	epName := ep.Name()
	time.Sleep(100 * time.Millisecond)

	n.ctrlr.Lock()
	defer n.ctrlr.Unlock()
	sr, ok := n.ctrlr.svcRecords[n.id]
	if !ok || sr.svcMap == nil {
		return nil
	}
	for k, entries := range sr.svcMap {
		if strings.Split(k, ".")[0] == epName || len(entries) == 0 {
			continue
		}
		recs = append(recs, etchostsRecord{Hosts: k, IP: entries[0].ip})
	}
	return recs
}

type sandbox struct {
	mu        sync.Mutex
	endpoints []*endpoint
	hosts     map[string]string
}

func (sb *sandbox) deleteHostsEntries(recs []etchostsRecord) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for _, r := range recs {
		delete(sb.hosts, r.Hosts)
	}
}

func (sb *sandbox) ResolveName(name string, ipType int) ([]net.IP, bool) {
	sb.mu.Lock()
	eps := append([]*endpoint(nil), sb.endpoints...)
	sb.mu.Unlock()
	for _, ep := range eps {
		n := ep.getNetwork()
		if ip, miss := n.ResolveName(name, ipType); ip != nil || miss {
			return ip, miss
		}
	}
	return nil, false
}

func (ep *endpoint) sbLeave(sb *sandbox) error {
	n := ep.getNetwork()
	sb.deleteHostsEntries(n.getSvcRecords(ep))
	return nil
}

func main() {
	c := &controller{svcRecords: map[string]svcInfo{}}
	n := &network{ctrlr: c, id: "3f2a9c", name: "appnet"}
	c.svcRecords[n.id] = svcInfo{svcMap: map[string][]svcMapEntry{
		"web.appnet": {{ip: "10.0.1.2", serviceID: "s1"}},
		"db.appnet":  {{ip: "10.0.1.3", serviceID: "s2"}},
	}}
	web := &endpoint{name: "web", network: n}
	db := &endpoint{name: "db", network: n}
	sb := &sandbox{endpoints: []*endpoint{web, db}, hosts: map[string]string{"db.appnet": "10.0.1.3"}}

	done := make(chan struct{}, 2)
	go func() {
		// embedded DNS server resolving a peer name for another container.
		ips, _ := sb.ResolveName("db.appnet.", 4)
		fmt.Println("resolved", ips)
		done <- struct{}{}
	}()
	go func() {
		// docker network disconnect: the container leaves the network.
		time.Sleep(20 * time.Millisecond)
		_ = web.sbLeave(sb)
		done <- struct{}{}
	}()
	<-done
	<-done
	fmt.Println("done")
}
