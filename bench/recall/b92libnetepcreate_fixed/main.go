// Project: moby/moby libnetwork (libnetwork/store.go controller.processEndpointCreate, libnetwork/network.go network.getSvcRecords, libnetwork/endpoint.go sbLeave), Docker 20.10, June 2021.
// Bug: the store watch loop's processEndpointCreate takes the controller lock and, still holding it, indexes its netWatch map with n.ID() and ep.ID(), which take the network and endpoint locks, while getSvcRecords (called when another container on the same network leaves its sandbox) holds the network lock and then takes the controller lock, so the two goroutines deadlock AB-BA and docker run hangs (PR #42569 "libnetwork: processEndpointCreate: Fix deadlock between getSvcRecords and processEndpointCreate", which reads the IDs before taking c.Lock; code approximate).
package main

import (
	"fmt"
	"sync"
	"time"
)

type svcInfo struct {
	svcMap map[string][]string
}

type netWatch struct {
	localEps  map[string]*endpoint
	remoteEps map[string]*endpoint
}

type controller struct {
	svcRecords map[string]svcInfo
	nmap       map[string]*netWatch
	watchCh    chan *endpoint
	sync.Mutex
}

type network struct {
	ctrlr *controller
	name  string
	id    string
	sync.Mutex
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

type endpoint struct {
	name    string
	id      string
	network *network
	ip      string
	sync.Mutex
}

func (ep *endpoint) ID() string {
	ep.Lock()
	defer ep.Unlock()
	return ep.id
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

// addSvcRecords already reads the network ID before locking the controller.
func (n *network) addSvcRecords(eID, name, epIP string) {
	networkID := n.ID()
	c := n.getController()
	c.Lock()
	defer c.Unlock()
	sr, ok := c.svcRecords[networkID]
	if !ok {
		sr = svcInfo{svcMap: make(map[string][]string)}
		c.svcRecords[networkID] = sr
	}
	sr.svcMap[name] = append(sr.svcMap[name], epIP)
}

func (n *network) updateSvcRecord(ep *endpoint, isAdd bool) {
	if isAdd {
		n.addSvcRecords(ep.ID(), ep.Name(), ep.ip)
	}
}

func (n *network) getSvcRecords(ep *endpoint) []string {
	n.Lock()
	defer n.Unlock()

	if ep == nil {
		return nil
	}
	epName := ep.Name()
	time.Sleep(50 * time.Millisecond) // window between the two acquisitions

	n.ctrlr.Lock()
	defer n.ctrlr.Unlock()
	sr, ok := n.ctrlr.svcRecords[n.id]
	if !ok {
		return nil
	}
	var recs []string
	for name, ips := range sr.svcMap {
		if name == epName {
			continue
		}
		for _, ip := range ips {
			recs = append(recs, ip+" "+name)
		}
	}
	return recs
}

type sandbox struct{ hosts map[string]bool }

func (sb *sandbox) deleteHostsEntries(recs []string) {
	for _, r := range recs {
		delete(sb.hosts, r)
	}
}

func (ep *endpoint) sbLeave(sb *sandbox) {
	n := ep.getNetwork()
	sb.deleteHostsEntries(n.getSvcRecords(ep))
}

func (c *controller) processEndpointCreate(nmap map[string]*netWatch, ep *endpoint) {
	n := ep.getNetwork()
	networkID := n.ID()
	endpointID := ep.ID()

	c.Lock()
	nw, ok := nmap[networkID]
	c.Unlock()

	if ok {
		// Update the svc db for the local endpoint join right away
		n.updateSvcRecord(ep, true)

		c.Lock()
		nw.localEps[endpointID] = ep
		delete(nw.remoteEps, endpointID)
		c.Unlock()
		return
	}

	nw = &netWatch{localEps: make(map[string]*endpoint), remoteEps: make(map[string]*endpoint)}
	n.updateSvcRecord(ep, true)

	c.Lock()
	nw.localEps[endpointID] = ep
	nmap[networkID] = nw
	c.Unlock()
}

func (c *controller) watchLoop(done func()) {
	defer done()
	for ep := range c.watchCh {
		c.processEndpointCreate(c.nmap, ep)
	}
}

func main() {
	c := &controller{svcRecords: make(map[string]svcInfo), nmap: make(map[string]*netWatch), watchCh: make(chan *endpoint, 1)}
	n := &network{ctrlr: c, name: "appnet", id: "3f1c9a"}
	old := &endpoint{name: "web-1", id: "ep-old", network: n, ip: "172.18.0.2"}
	n.addSvcRecords(old.id, old.name, old.ip)

	var wg sync.WaitGroup
	wg.Add(2)
	go c.watchLoop(wg.Done)
	go func() { // container web-1 stops and leaves its sandbox
		defer wg.Done()
		old.sbLeave(&sandbox{hosts: map[string]bool{}})
	}()
	time.Sleep(10 * time.Millisecond)
	// container web-2 joins the same network (sbJoin -> watchSvcRecord)
	c.watchCh <- &endpoint{name: "web-2", id: "ep-new", network: n, ip: "172.18.0.3"}
	close(c.watchCh)
	wg.Wait()
	fmt.Println("done, records:", c.svcRecords[n.id].svcMap)
}
