// Project: moby/moby libnetwork (libnetwork/store.go, libnetwork/network.go,
// libnetwork/endpoint.go)
// Issue: moby/moby#42545 "libnetwork: processEndpointDelete: Fix deadlock
// between getSvcRecords and processEndpointDelete" (20.10 backport
// moby/libnetwork#2679; fixes moby/libnetwork#2649 and moby/moby#46661)
//
// Bug: the controller's watch loop handles an endpoint leaving
// (unWatchSvcRecord -> watchLoop -> processEndpointDelete). processEndpointDelete
// takes the controller lock (line 211) and then indexes its network-watch map
// with n.ID(), an accessor that takes the network lock (line 80). Meanwhile a
// container joining the network builds its /etc/hosts entries through
// network.getSvcRecords, which takes the network lock (line 122) and, while
// holding it, the controller lock through n.ctrlr.Lock() (line 133). With one
// goroutine in each function the two acquire network and controller locks in
// opposite orders: processEndpointDelete blocks in n.ID()'s Lock while
// getSvcRecords blocks in n.ctrlr.Lock(), and the whole daemon freezes
// (`docker run` hangs). The fix reads n.ID() into a local before taking the
// controller lock.
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

const (
	LocalScope = "local"
	SwarmScope = "swarm"
)

// Record mirrors etchosts.Record.
type Record struct {
	Hosts string
	IP    string
}

type svcMapEntry struct {
	ip        string
	serviceID string
}

type svcInfo struct {
	svcMap map[string][]svcMapEntry
}

type netWatch struct {
	localEps  map[string]*endpoint
	remoteEps map[string]*endpoint
	stopCh    chan struct{}
}

type controller struct {
	svcRecords  map[string]svcInfo
	unWatchCh   chan *endpoint
	distributed bool
	sync.Mutex
}

type network struct {
	ctrlr       *controller
	name        string
	networkType string
	id          string
	scope       string
	multihost   bool
	sync.Mutex
}

type endpoint struct {
	name    string
	id      string
	network *network
	ip      string
	sync.Mutex
}

func (n *network) ID() string {
	n.Lock()
	defer n.Unlock()

	return n.id
}

func (n *network) Scope() string {
	n.Lock()
	defer n.Unlock()
	return n.scope
}

func (n *network) driverIsMultihost() bool {
	return n.multihost
}

func (ep *endpoint) Name() string {
	ep.Lock()
	defer ep.Unlock()

	return ep.name
}

func (ep *endpoint) ID() string {
	ep.Lock()
	defer ep.Unlock()

	return ep.id
}

func (ep *endpoint) getNetwork() *network {
	ep.Lock()
	defer ep.Unlock()

	return ep.network
}

func (c *controller) isDistributedControl() bool {
	return c.distributed
}

func (n *network) getSvcRecords(ep *endpoint) []Record {
	n.Lock()
	defer n.Unlock()

	if ep == nil {
		return nil
	}

	var recs []Record

	epName := ep.Name()

	n.ctrlr.Lock()
	defer n.ctrlr.Unlock()
	sr, ok := n.ctrlr.svcRecords[n.id]
	if !ok || sr.svcMap == nil {
		return nil
	}

	// Loop on service names on this network
	for k, mapEntryList := range sr.svcMap {
		if strings.Split(k, ".")[0] == epName {
			continue
		}
		if len(mapEntryList) == 0 {
			continue
		}
		recs = append(recs, Record{
			Hosts: k,
			IP:    mapEntryList[0].ip,
		})
	}

	return recs
}

func (n *network) deleteSvcRecords(eID, name, serviceID, epIP string) {
	networkID := n.ID()
	c := n.ctrlr
	c.Lock()
	defer c.Unlock()

	sr, ok := c.svcRecords[networkID]
	if !ok {
		return
	}
	entries := sr.svcMap[name]
	for i, e := range entries {
		if e.ip == epIP && e.serviceID == serviceID {
			sr.svcMap[name] = append(entries[:i], entries[i+1:]...)
			break
		}
	}
}

func (n *network) updateSvcRecord(ep *endpoint, localEps []*endpoint, isAdd bool) {
	if isAdd {
		return
	}
	n.deleteSvcRecords(ep.ID(), ep.Name(), "", ep.ip)
}

func (c *controller) getLocalEps(nw *netWatch) []*endpoint {
	c.Lock()
	defer c.Unlock()

	var epl []*endpoint
	for _, ep := range nw.localEps {
		epl = append(epl, ep)
	}

	return epl
}

func (c *controller) unWatchSvcRecord(ep *endpoint) {
	c.unWatchCh <- ep
}

func (c *controller) watchLoop(nmap map[string]*netWatch) {
	for ep := range c.unWatchCh {
		c.processEndpointDelete(nmap, ep)
	}
}

func (c *controller) processEndpointDelete(nmap map[string]*netWatch, ep *endpoint) {
	n := ep.getNetwork()
	if !c.isDistributedControl() && n.Scope() == SwarmScope && n.driverIsMultihost() {
		return
	}

	networkID := n.ID()
	endpointID := ep.ID()

	c.Lock()
	nw, ok := nmap[networkID]

	if ok {
		delete(nw.localEps, endpointID)
		c.Unlock()

		// Update the svc db about local endpoint leave right away
		// Do this after we remove this ep from localEps so that we
		// don't try to remove this svc record from this ep's
		// sandbox.
		n.updateSvcRecord(ep, c.getLocalEps(nw), false)

		c.Lock()
		if len(nw.localEps) == 0 {
			close(nw.stopCh)

			// This is the last container going away for the network. Destroy
			// this network's svc db entry
			delete(c.svcRecords, networkID)

			delete(nmap, networkID)
		}
	}
	c.Unlock()
}

// churn is how long containers keep leaving and joining the network.
const churn = 6 * time.Second

func main() {
	c := &controller{
		svcRecords: make(map[string]svcInfo),
		unWatchCh:  make(chan *endpoint),
	}
	n := &network{ctrlr: c, name: "appnet", networkType: "bridge", id: "3f1c9a", scope: LocalScope}
	c.svcRecords[n.id] = svcInfo{svcMap: map[string][]svcMapEntry{
		"db":        {{ip: "172.20.0.2"}},
		"db.appnet": {{ip: "172.20.0.2"}},
	}}

	nmap := make(map[string]*netWatch)
	nw := &netWatch{localEps: make(map[string]*endpoint), remoteEps: make(map[string]*endpoint), stopCh: make(chan struct{})}
	for i := 0; i < 64; i++ {
		ep := &endpoint{name: fmt.Sprintf("old%d", i), id: fmt.Sprintf("ep-old-%d", i), network: n, ip: fmt.Sprintf("172.20.1.%d", i)}
		nw.localEps[ep.id] = ep
	}
	nmap[n.id] = nw
	go c.watchLoop(nmap)

	// The two critical sections are short, so main keeps containers leaving
	// and joining for a while, starting each pair at the same moment; with the
	// bug the daemon locks up within the first rounds.
	joining := &endpoint{name: "web", id: "ep-web", network: n, ip: "172.20.0.3"}
	for i, deadline := 0, time.Now().Add(churn); time.Now().Before(deadline); i++ {
		// One container leaves the network while another one joins it.
		var wg sync.WaitGroup
		wg.Add(2)
		start := make(chan struct{})
		go func() {
			defer wg.Done()
			<-start
			// docker rm: the endpoint is handed to the watch loop
			// (processEndpointDelete).
			c.unWatchSvcRecord(&endpoint{name: fmt.Sprintf("old%d", i%64), id: fmt.Sprintf("ep-old-%d", i%64), network: n, ip: fmt.Sprintf("172.20.1.%d", i%64)})
		}()
		go func() {
			defer wg.Done()
			<-start
			// docker run --network appnet: /etc/hosts is built from the
			// network's service records (getSvcRecords).
			_ = n.getSvcRecords(joining)
		}()
		close(start)
		wg.Wait()
	}
	fmt.Println("all endpoints processed")
}
