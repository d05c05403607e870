// Project: moby/moby libnetwork (libnetwork/store.go controller.processEndpointDelete/watchLoop, libnetwork/network.go network.getSvcRecords/ID, libnetwork/endpoint.go sbLeave), Docker 20.10, June 2021.
// Bug: getSvcRecords, called when a container leaves a network, locks the network and then the controller, while the controller's watch loop runs processEndpointDelete with the controller locked and calls n.ID(), which locks the network. With containers cycling quickly the two goroutines deadlock AB-BA and docker run hangs (moby PR #42545, backported as libnetwork #2679 for issue #2649; the fix reads n.ID() into a local before taking the controller lock).
package main

import (
	"fmt"
	"sync"
	"time"
)

type svcMap map[string][]string

type svcInfo struct {
	svcMap svcMap
}

type netWatch struct {
	localEps map[string]*endpoint
	stopCh   chan struct{}
}

type controller struct {
	svcRecords map[string]*svcInfo
	unWatchCh  chan *endpoint
	sync.Mutex
}

type network struct {
	ctrlr *controller
	name  string
	id    string
	sync.Mutex
}

type endpoint struct {
	name    string
	id      string
	network *network
	ip      string
	sync.Mutex
}

type record struct{ Hosts, IP string }

type sandbox struct {
	id    string
	hosts []record
}

// testHookGetSvcRecords lets the test widen the window after the network lock.
var testHookGetSvcRecords = func() {}

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

func (n *network) getSvcRecords(ep *endpoint) []record {
	n.Lock()
	defer n.Unlock()
	if ep == nil {
		return nil
	}
	var recs []record
	testHookGetSvcRecords()
	epName := ep.Name()

	n.ctrlr.Lock()
	defer n.ctrlr.Unlock()
	sr, ok := n.ctrlr.svcRecords[n.id]
	if !ok || sr.svcMap == nil {
		return nil
	}
	for h, ips := range sr.svcMap {
		if h == epName {
			continue
		}
		for _, ip := range ips {
			recs = append(recs, record{Hosts: h, IP: ip})
		}
	}
	return recs
}

func (sb *sandbox) deleteHostsEntries(recs []record) {
	fmt.Println("sandbox", sb.id, "removing", len(recs), "hosts entries")
}

func (ep *endpoint) sbLeave(sb *sandbox) {
	n := ep.getNetwork()
	sb.deleteHostsEntries(n.getSvcRecords(ep))
	n.getController().unWatchSvcRecord(ep)
}

func (c *controller) unWatchSvcRecord(ep *endpoint) { c.unWatchCh <- ep }

func (c *controller) getLocalEps(nw *netWatch) []*endpoint {
	c.Lock()
	defer c.Unlock()
	var eps []*endpoint
	for _, ep := range nw.localEps {
		eps = append(eps, ep)
	}
	return eps
}

func (n *network) updateSvcRecord(ep *endpoint, localEps []*endpoint, isAdd bool) {
	fmt.Println("svc record update for", ep.Name(), "add:", isAdd, "local eps:", len(localEps))
}

func (c *controller) processEndpointDelete(nmap map[string]*netWatch, ep *endpoint) {
	n := ep.getNetwork()
	// Read the network ID before taking the controller lock: getSvcRecords
	// locks the network first and the controller second.
	networkID := n.ID()

	c.Lock()
	nw, ok := nmap[networkID]
	if ok {
		delete(nw.localEps, ep.id)
		c.Unlock()

		n.updateSvcRecord(ep, c.getLocalEps(nw), false)

		c.Lock()
		if len(nw.localEps) == 0 {
			close(nw.stopCh)
			delete(c.svcRecords, networkID)
			delete(nmap, networkID)
		}
	}
	c.Unlock()
}

func (c *controller) watchLoop(nmap map[string]*netWatch) {
	for ep := range c.unWatchCh {
		c.processEndpointDelete(nmap, ep)
	}
}

func main() {
	c := &controller{svcRecords: map[string]*svcInfo{}, unWatchCh: make(chan *endpoint, 8)}
	n := &network{ctrlr: c, name: "app-net", id: "n1"}
	epA := &endpoint{name: "web", id: "ep-a", network: n, ip: "10.0.0.2"}
	epB := &endpoint{name: "db", id: "ep-b", network: n, ip: "10.0.0.3"}
	c.svcRecords["n1"] = &svcInfo{svcMap: svcMap{"web": {"10.0.0.2"}, "db": {"10.0.0.3"}}}
	nmap := map[string]*netWatch{"n1": {localEps: map[string]*endpoint{"ep-b": epB}, stopCh: make(chan struct{})}}
	go c.watchLoop(nmap)

	testHookGetSvcRecords = func() { time.Sleep(100 * time.Millisecond) }

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // docker stop web: the endpoint leaves its sandbox
		defer wg.Done()
		epA.sbLeave(&sandbox{id: "sb-web"})
	}()
	time.Sleep(30 * time.Millisecond)
	c.unWatchSvcRecord(epB) // db container exited earlier; its delete event arrives now
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	fmt.Println("done")
}
