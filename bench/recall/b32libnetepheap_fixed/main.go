// Project: moby/libnetwork (endpoint.go, sandbox.go, network.go, store.go)
// Issue: moby/libnetwork#858 "Possible deadlock: contention between network and endpoint lock",
// fixed by moby/libnetwork#861 "EP lock shouldn't be held when trying for network lock".
//
// Bug: "docker network connect" creates an endpoint and joins it to the container's sandbox.
// CreateEndpoint hands the endpoint to the controller's watch loop (watchSvcRecord), which
// updates the network's service records: network.updateSvcRecord takes the network's embedded
// mutex (n.Lock(), line 112) and, holding it, asks the endpoint for its interface and name
// (ep.Iface()/ep.Name() take the endpoint's embedded mutex, ep.Lock(), line 261). Meanwhile the
// join pushes the endpoint onto the sandbox's endpoint heap; container/heap calls epHeap.Less
// (through heap.Interface), which calls endpoint.getSandbox for both endpoints, and getSandbox
// takes the endpoint's mutex (ep.Lock(), line 278) and, still holding it, calls
// ep.network.getController(), which takes the network's mutex (n.Lock(), line 75).
// Network -> endpoint on the watch loop against endpoint -> network on the joining goroutine:
// AB-BA on the same network and endpoint objects. The fix reads the controller before taking
// the endpoint lock in getSandbox.
// (No datastore or drivers: main connects and disconnects containers in a loop, with the watch
// loop running, until the two goroutines meet.)
package main

import (
	"container/heap"
	"fmt"
	"sync"
)

// ---- network.go / controller.go ----

type svcMap map[string]string

type netWatch struct {
	localEps map[string]*endpoint
}

type controller struct {
	sandboxes map[string]*sandbox
	svcDb     map[string]svcMap
	watchCh   chan *endpoint
	unWatchCh chan *endpoint
	sync.Mutex
}

func newController() *controller {
	c := &controller{
		sandboxes: map[string]*sandbox{},
		svcDb:     map[string]svcMap{},
		watchCh:   make(chan *endpoint),
		unWatchCh: make(chan *endpoint),
	}
	go c.watchLoop()
	return c
}

type network struct {
	ctrlr  *controller
	name   string
	id     string
	nextIP int
	sync.Mutex
}

func (n *network) Name() string {
	n.Lock()
	defer n.Unlock()
	return n.name
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

func (n *network) allocateAddress() string {
	n.Lock()
	defer n.Unlock()
	n.nextIP++
	return fmt.Sprintf("172.20.%d.%d", n.nextIP/250, n.nextIP%250+2)
}

func (n *network) CreateEndpoint(name string) (*endpoint, error) {
	if name == "" {
		return nil, fmt.Errorf("invalid name: %q", name)
	}

	ep := &endpoint{name: name, network: n}
	ep.id = fmt.Sprintf("%s-%s", n.ID(), name)
	ep.iface = &endpointInterface{addr: n.allocateAddress()}

	// Watch for service records
	n.getController().watchSvcRecord(ep)

	return ep, nil
}

func (n *network) updateSvcRecord(ep *endpoint, localEps []*endpoint, isAdd bool) {
	c := n.getController()
	c.Lock()
	sr, ok := c.svcDb[n.ID()]
	if !ok {
		c.svcDb[n.ID()] = svcMap{}
		sr = c.svcDb[n.ID()]
	}
	c.Unlock()

	n.Lock()
	var recs []hostsRecord
	if iface := ep.Iface(); iface.Address() != "" {
		if isAdd {
			sr[ep.Name()] = iface.Address()
			sr[ep.Name()+"."+n.name] = iface.Address()
		} else {
			delete(sr, ep.Name())
			delete(sr, ep.Name()+"."+n.name)
		}

		recs = append(recs, hostsRecord{
			Hosts: ep.Name(),
			IP:    iface.Address(),
		})

		recs = append(recs, hostsRecord{
			Hosts: ep.Name() + "." + n.name,
			IP:    iface.Address(),
		})
	}
	n.Unlock()

	// If there are no records to add or delete then simply return here
	if len(recs) == 0 {
		return
	}

	var sbList []*sandbox
	for _, ep := range localEps {
		if sb, hasSandbox := ep.getSandbox(); hasSandbox {
			sbList = append(sbList, sb)
		}
	}

	for _, sb := range sbList {
		if isAdd {
			sb.addHostsEntries(recs)
		} else {
			sb.deleteHostsEntries(recs)
		}
	}
}

// ---- store.go ----

func (c *controller) watchSvcRecord(ep *endpoint) {
	c.watchCh <- ep
}

func (c *controller) unWatchSvcRecord(ep *endpoint) {
	c.unWatchCh <- ep
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

func (c *controller) processEndpointCreate(nmap map[string]*netWatch, ep *endpoint) {
	n := ep.getNetwork()
	c.Lock()
	nw, ok := nmap[n.ID()]
	if !ok {
		nw = &netWatch{localEps: make(map[string]*endpoint)}
		nmap[n.ID()] = nw
	}
	c.Unlock()

	// Update the svc db for the local endpoint join right away
	// Do this before adding this ep to localEps so that we don't
	// try to update this ep's container's svc records
	n.updateSvcRecord(ep, c.getLocalEps(nw), true)

	c.Lock()
	nw.localEps[ep.ID()] = ep
	c.Unlock()
}

func (c *controller) processEndpointDelete(nmap map[string]*netWatch, ep *endpoint) {
	n := ep.getNetwork()
	c.Lock()
	nw, ok := nmap[n.ID()]
	if ok {
		delete(nw.localEps, ep.ID())
	}
	c.Unlock()

	if ok {
		// Update the svc db about local endpoint leave right away
		// Do this after we remove this ep from localEps so that we
		// don't try to remove this svc record from this ep's container.
		n.updateSvcRecord(ep, c.getLocalEps(nw), false)
	}
}

func (c *controller) watchLoop() {
	nmap := make(map[string]*netWatch)
	for {
		select {
		case ep := <-c.watchCh:
			c.processEndpointCreate(nmap, ep)
		case ep := <-c.unWatchCh:
			c.processEndpointDelete(nmap, ep)
		}
	}
}

// ---- endpoint.go ----

type InterfaceInfo interface {
	Address() string
}

type endpointInterface struct {
	addr string
}

func (epi *endpointInterface) Address() string { return epi.addr }

type endpoint struct {
	name      string
	id        string
	network   *network
	iface     *endpointInterface
	sandboxID string
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

func (ep *endpoint) Iface() InterfaceInfo {
	ep.Lock()
	defer ep.Unlock()

	if ep.iface != nil {
		return ep.iface
	}

	return nil
}

func (ep *endpoint) getNetwork() *network {
	ep.Lock()
	defer ep.Unlock()
	return ep.network
}

func (ep *endpoint) getSandbox() (*sandbox, bool) {
	c := ep.network.getController()
	ep.Lock()
	sid := ep.sandboxID
	ep.Unlock()

	c.Lock()
	ps, ok := c.sandboxes[sid]
	c.Unlock()

	return ps, ok
}

func (ep *endpoint) Join(sbox *sandbox) error {
	if sbox == nil {
		return fmt.Errorf("invalid Sandbox passed to enpoint join")
	}
	return ep.sbJoin(sbox)
}

func (ep *endpoint) sbJoin(sb *sandbox) error {
	ep.Lock()
	if ep.sandboxID != "" {
		ep.Unlock()
		return fmt.Errorf("another container is attached to the same network endpoint")
	}
	ep.sandboxID = sb.ID()
	ep.Unlock()

	// (the driver's Join and the sandbox programming are left out)

	sb.Lock()
	heap.Push(&sb.endpoints, ep)
	sb.Unlock()

	return nil
}

func (ep *endpoint) Leave(sb *sandbox) error {
	sb.Lock()
	for i, e := range sb.endpoints {
		if e == ep {
			heap.Remove(&sb.endpoints, i)
			break
		}
	}
	sb.Unlock()

	ep.Lock()
	ep.sandboxID = ""
	ep.Unlock()
	return nil
}

func (ep *endpoint) Delete() error {
	ep.Lock()
	if ep.sandboxID != "" {
		ep.Unlock()
		return fmt.Errorf("endpoint %s is still attached", ep.name)
	}
	n := ep.network
	ep.Unlock()

	n.getController().unWatchSvcRecord(ep)
	return nil
}

// ---- sandbox.go ----

type hostsRecord struct {
	Hosts string
	IP    string
}

type epHeap []*endpoint

type sandbox struct {
	id         string
	endpoints  epHeap
	epPriority map[string]int
	hosts      map[string]string
	sync.Mutex
}

func (sb *sandbox) ID() string { return sb.id }

func (sb *sandbox) addHostsEntries(recs []hostsRecord) {
	sb.Lock()
	defer sb.Unlock()
	for _, r := range recs {
		sb.hosts[r.Hosts] = r.IP
	}
}

func (sb *sandbox) deleteHostsEntries(recs []hostsRecord) {
	sb.Lock()
	defer sb.Unlock()
	for _, r := range recs {
		delete(sb.hosts, r.Hosts)
	}
}

func (epi epHeap) Len() int { return len(epi) }

func (epi epHeap) Less(i, j int) bool {
	var (
		cip, cjp int
		ok       bool
	)

	ci, _ := epi[i].getSandbox()
	cj, _ := epi[j].getSandbox()

	if ci != nil {
		cip, ok = ci.epPriority[epi[i].ID()]
		if !ok {
			cip = 0
		}
	}

	if cj != nil {
		cjp, ok = cj.epPriority[epi[j].ID()]
		if !ok {
			cjp = 0
		}
	}

	if cip == cjp {
		return epi[i].network.Name() < epi[j].network.Name()
	}

	return cip > cjp
}

func (epi epHeap) Swap(i, j int) { epi[i], epi[j] = epi[j], epi[i] }

func (epi *epHeap) Push(x interface{}) {
	*epi = append(*epi, x.(*endpoint))
}

func (epi *epHeap) Pop() interface{} {
	old := *epi
	n := len(old)
	x := old[n-1]
	*epi = old[0 : n-1]
	return x
}

func (c *controller) NewSandbox(containerID string) *sandbox {
	sb := &sandbox{
		id:         "sb-" + containerID,
		epPriority: map[string]int{},
		hosts:      map[string]string{},
	}
	heap.Init(&sb.endpoints)
	c.Lock()
	c.sandboxes[sb.id] = sb
	c.Unlock()
	return sb
}

const rounds = 100000

func main() {
	c := newController()
	bridge := &network{ctrlr: c, name: "bridge", id: "n0"}
	frontend := &network{ctrlr: c, name: "frontend", id: "n1"}

	// A container running on the default bridge network.
	sb := c.NewSandbox("web")
	ep0, _ := bridge.CreateEndpoint("web")
	if err := ep0.Join(sb); err != nil {
		fmt.Println(err)
		return
	}

	// "docker network connect frontend web" / "docker network disconnect frontend web",
	// repeatedly, while the controller's watch loop keeps the service records up to date.
	for i := 0; i < rounds; i++ {
		ep, err := frontend.CreateEndpoint(fmt.Sprintf("web-%d", i))
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := ep.Join(sb); err != nil {
			fmt.Println(err)
			return
		}
		if err := ep.Leave(sb); err != nil {
			fmt.Println(err)
			return
		}
		if err := ep.Delete(); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("connected and disconnected", rounds, "times; hosts entries:", len(sb.hosts))
}
