// Project: moby/libnetwork (drivers/overlay: peerdb.go, ov_serf.go, overlay.go, ov_network.go)
// Issue: moby/libnetwork#1638 "Do not hold the peer map lock during the peerDBNetworkWalk".
//
// Bug: when the overlay driver joins the serf cluster (nodeJoin -> serfJoin -> pushLocalDb) it
// walks its peer database and announces every local endpoint. peerDbNetworkWalk takes the
// per-network peerMap mutex (pMap.Lock(), line 255) and keeps it while it runs the walk callback;
// the callback, pushLocalEndpointEvent, sends the announcement on the unbuffered d.notifyCh
// (line 348). The only receiver of d.notifyCh is the serf event loop, startSerfLoop, which also
// handles the cluster's user events: a "join" event from a remote node goes processEvent ->
// peerAdd -> peerDbAdd, which needs the same peerMap mutex (pMap.Lock(), line 298). Once the
// serf loop picks up a remote join while the walk is in progress, the loop blocks on the peerMap
// lock held by the walker, and the walker blocks forever on the send that only the loop can
// receive. The fix copies the peer map under the lock and runs the callbacks after unlocking.
// (serf itself is replaced by a small fake that delivers the neighbor's join event during the
// walk.)
package main

import (
	"fmt"
	"sync"
	"time"
)

// ---- a minimal stand-in for github.com/hashicorp/serf/serf ----

type EventType int

const (
	EventMemberJoin EventType = iota
	EventUser
	EventQuery
)

type Event interface {
	EventType() EventType
}

type UserEvent struct {
	LTime    uint64
	Name     string
	Payload  []byte
	Coalesce bool
}

func (u UserEvent) EventType() EventType { return EventUser }

type Query struct{ Name string }

func (q *Query) EventType() EventType { return EventQuery }

type SerfState int

const (
	SerfAlive SerfState = iota
	SerfShutdown
)

type Member struct{ Addr string }

// Config is the subset of serf.Config the driver sets.
type Config struct {
	BindAddr string
	EventCh  chan<- Event
}

// Serf is the fake cluster node; it records the user events the driver broadcasts. Events that
// other nodes send (clusterEvents) reach this node once it has joined the cluster: the fake hands
// them to the application the first time serf's state is looked at after the join, and gives the
// application's event loop a moment to pick them up.
type Serf struct {
	addr    string
	eventCh chan<- Event
	mu      sync.Mutex
	state   SerfState
	joined  bool
	pending []Event
	sent    []string
}

// clusterEvents are the user events the other nodes of the fake cluster will send.
var clusterEvents []Event

// Create creates a new fake serf instance.
func Create(conf *Config) (*Serf, error) {
	s := &Serf{addr: conf.BindAddr, eventCh: conf.EventCh, pending: clusterEvents}
	return s, nil
}

func (s *Serf) LocalMember() Member { return Member{Addr: s.addr} }

func (s *Serf) State() SerfState {
	s.mu.Lock()
	pending := s.pending
	if !s.joined {
		pending = nil
	} else {
		s.pending = nil
	}
	state := s.state
	s.mu.Unlock()

	if len(pending) > 0 {
		for _, e := range pending {
			s.eventCh <- e
		}
		time.Sleep(20 * time.Millisecond)
	}
	return state
}

func (s *Serf) UserEvent(name string, payload []byte, coalesce bool) error {
	s.mu.Lock()
	s.sent = append(s.sent, name)
	s.mu.Unlock()
	return nil
}

func (s *Serf) Join(existing []string, ignoreOld bool) (int, error) {
	s.mu.Lock()
	s.joined = true
	s.mu.Unlock()
	return len(existing), nil
}

func (s *Serf) Leave() error { return nil }

func (s *Serf) Shutdown() error {
	s.mu.Lock()
	s.state = SerfShutdown
	s.mu.Unlock()
	return nil
}

// ---- overlay driver ----

type endpoint struct {
	id   string
	nid  string
	addr string
	mask string
	mac  string
}

type network struct {
	id        string
	endpoints map[string]*endpoint
	sync.Mutex
}

func (n *network) endpoint(eid string) *endpoint {
	n.Lock()
	defer n.Unlock()
	return n.endpoints[eid]
}

func (n *network) addEndpoint(ep *endpoint) {
	n.Lock()
	n.endpoints[ep.id] = ep
	n.Unlock()
}

type networkTable map[string]*network

type ovNotify struct {
	action string
	ep     *endpoint
	nw     *network
}

type driver struct {
	eventCh          chan Event
	notifyCh         chan ovNotify
	exitCh           chan chan struct{}
	bindAddress      string
	advertiseAddress string
	neighIP          string
	serfInstance     *Serf
	networks         networkTable
	peerDb           peerNetworkMap
	joinOnce         sync.Once
	sync.Mutex
}

func (d *driver) network(nid string) *network {
	d.Lock()
	networks := d.networks
	d.Unlock()
	return networks[nid]
}

func (d *driver) isSerfAlive() bool {
	d.Lock()
	serfInstance := d.serfInstance
	d.Unlock()
	if serfInstance == nil || serfInstance.State() != SerfAlive {
		return false
	}
	return true
}

// ---- peerdb.go ----

type peerKey struct {
	peerIP  string
	peerMac string
}

type peerEntry struct {
	eid        string
	vtep       string
	peerIPMask string
	inSandbox  bool
	isLocal    bool
}

type peerMap struct {
	mp map[string]peerEntry
	sync.Mutex
}

type peerNetworkMap struct {
	mp map[string]*peerMap
	sync.Mutex
}

func (pKey peerKey) String() string {
	return fmt.Sprintf("%s %s", pKey.peerIP, pKey.peerMac)
}

func (d *driver) peerDbWalk(f func(string, *peerKey, *peerEntry) bool) error {
	d.peerDb.Lock()
	nids := []string{}
	for nid := range d.peerDb.mp {
		nids = append(nids, nid)
	}
	d.peerDb.Unlock()

	for _, nid := range nids {
		d.peerDbNetworkWalk(nid, func(pKey *peerKey, pEntry *peerEntry) bool {
			return f(nid, pKey, pEntry)
		})
	}
	return nil
}

func (d *driver) peerDbNetworkWalk(nid string, f func(*peerKey, *peerEntry) bool) error {
	d.peerDb.Lock()
	pMap, ok := d.peerDb.mp[nid]
	if !ok {
		d.peerDb.Unlock()
		return nil
	}
	d.peerDb.Unlock()

	pMap.Lock()
	for pKeyStr, pEntry := range pMap.mp {
		var pKey peerKey
		if _, err := fmt.Sscan(pKeyStr, &pKey.peerIP, &pKey.peerMac); err != nil {
			fmt.Printf("Peer key scan on network %s failed: %v\n", nid, err)
		}

		if f(&pKey, &pEntry) {
			pMap.Unlock()
			return nil
		}
	}
	pMap.Unlock()

	return nil
}

func (d *driver) peerDbAdd(nid, eid string, peerIP string, peerIPMask string,
	peerMac string, vtep string, isLocal bool) {

	d.peerDb.Lock()
	pMap, ok := d.peerDb.mp[nid]
	if !ok {
		d.peerDb.mp[nid] = &peerMap{
			mp: make(map[string]peerEntry),
		}

		pMap = d.peerDb.mp[nid]
	}
	d.peerDb.Unlock()

	pKey := peerKey{
		peerIP:  peerIP,
		peerMac: peerMac,
	}

	pEntry := peerEntry{
		eid:        eid,
		vtep:       vtep,
		peerIPMask: peerIPMask,
		isLocal:    isLocal,
	}

	pMap.Lock()
	pMap.mp[pKey.String()] = pEntry
	pMap.Unlock()
}

func (d *driver) peerAdd(nid, eid string, peerIP string, peerIPMask string,
	peerMac string, vtep string, updateDb bool) error {

	if nid == "" || eid == "" {
		return fmt.Errorf("invalid network or endpoint id")
	}

	if updateDb {
		d.peerDbAdd(nid, eid, peerIP, peerIPMask, peerMac, vtep, false)
	}

	n := d.network(nid)
	if n == nil {
		return nil
	}
	// (programming the neighbor and fdb entries into the sandbox is left out)
	return nil
}

func (d *driver) pushLocalDb() {
	d.peerDbWalk(func(nid string, pKey *peerKey, pEntry *peerEntry) bool {
		if pEntry.isLocal {
			d.pushLocalEndpointEvent("join", nid, pEntry.eid)
		}
		return false
	})
}

// ---- ov_network.go ----

func (d *driver) pushLocalEndpointEvent(action, nid, eid string) {
	n := d.network(nid)
	if n == nil {
		fmt.Printf("Error pushing local endpoint event for network %s\n", nid)
		return
	}
	ep := n.endpoint(eid)
	if ep == nil {
		fmt.Printf("Error pushing local endpoint event for ep %s / %s\n", nid, eid)
		return
	}

	if !d.isSerfAlive() {
		return
	}
	d.notifyCh <- ovNotify{
		action: action,
		nw:     n,
		ep:     ep,
	}
}

// ---- ov_serf.go ----

func (d *driver) serfInit() error {
	var err error

	config := &Config{BindAddr: d.advertiseAddress}

	d.eventCh = make(chan Event, 4)
	config.EventCh = d.eventCh

	s, err := Create(config)
	if err != nil {
		return fmt.Errorf("failed to create cluster node: %v", err)
	}

	d.Lock()
	d.serfInstance = s
	d.Unlock()

	d.notifyCh = make(chan ovNotify)
	d.exitCh = make(chan chan struct{})

	go d.startSerfLoop(d.eventCh, d.notifyCh, d.exitCh)
	return nil
}

func (d *driver) serfJoin(neighIP string) error {
	if neighIP == "" {
		return fmt.Errorf("no neighbor to join")
	}
	if _, err := d.serfInstance.Join([]string{neighIP}, false); err != nil {
		return fmt.Errorf("Failed to join the cluster at neigh IP %s: %v", neighIP, err)
	}
	return nil
}

func (d *driver) notifyEvent(event ovNotify) {
	ep := event.ep

	ePayload := fmt.Sprintf("%s %s %s %s", event.action, ep.addr, ep.mask, ep.mac)
	eName := fmt.Sprintf("jl %s %s %s", d.serfInstance.LocalMember().Addr,
		event.nw.id, ep.id)

	if err := d.serfInstance.UserEvent(eName, []byte(ePayload), true); err != nil {
		fmt.Printf("Sending user event failed: %v\n", err)
	}
}

func (d *driver) processEvent(u UserEvent) {
	var dummy, action, vtepStr, nid, eid, ipStr, maskStr, macStr string
	if _, err := fmt.Sscan(u.Name, &dummy, &vtepStr, &nid, &eid); err != nil {
		fmt.Printf("Failed to scan name string: %v\n", err)
	}

	if _, err := fmt.Sscan(string(u.Payload), &action,
		&ipStr, &maskStr, &macStr); err != nil {
		fmt.Printf("Failed to scan value string: %v\n", err)
	}

	if d.serfInstance.LocalMember().Addr == vtepStr {
		return
	}

	switch action {
	case "join":
		if err := d.peerAdd(nid, eid, ipStr, maskStr, macStr, vtepStr, true); err != nil {
			fmt.Printf("Peer add failed in the driver: %v\n", err)
		}
	case "leave":
	}
}

func (d *driver) startSerfLoop(eventCh chan Event, notifyCh chan ovNotify,
	exitCh chan chan struct{}) {

	for {
		select {
		case notify, ok := <-notifyCh:
			if !ok {
				break
			}

			d.notifyEvent(notify)
		case ch, ok := <-exitCh:
			if !ok {
				break
			}

			if err := d.serfInstance.Leave(); err != nil {
				fmt.Printf("failed leaving the cluster: %v\n", err)
			}

			d.serfInstance.Shutdown()
			close(ch)
			return
		case e, ok := <-eventCh:
			if !ok {
				break
			}

			if e.EventType() == EventQuery {
				break
			}

			u, ok := e.(UserEvent)
			if !ok {
				break
			}
			d.processEvent(u)
		}
	}
}

// ---- overlay.go ----

func (d *driver) nodeJoin(advertiseAddress, bindAddress string, self bool) {
	if self && !d.isSerfAlive() {
		d.Lock()
		d.advertiseAddress = advertiseAddress
		d.bindAddress = bindAddress
		d.Unlock()

		if err := d.serfInit(); err != nil {
			fmt.Printf("initializing serf instance failed: %v\n", err)
			return
		}
	}

	d.Lock()
	if !self {
		d.neighIP = advertiseAddress
	}
	neighIP := d.neighIP
	d.Unlock()

	if d.serfInstance != nil && neighIP != "" {
		var err error
		d.joinOnce.Do(func() {
			err = d.serfJoin(neighIP)
			if err == nil {
				d.pushLocalDb()
			}
		})
		if err != nil {
			fmt.Printf("joining serf neighbor %s failed: %v\n", advertiseAddress, err)
		}
	}
}

func main() {
	d := &driver{
		networks: networkTable{},
		peerDb:   peerNetworkMap{mp: map[string]*peerMap{}},
		neighIP:  "10.0.0.2",
	}

	// A network with containers already running on this host: their endpoints are local
	// entries in the peer database.
	nid := "ovnet1"
	n := &network{id: nid, endpoints: map[string]*endpoint{}}
	d.networks[nid] = n
	for i := 0; i < 16; i++ {
		ep := &endpoint{
			id:   fmt.Sprintf("ep%02d", i),
			nid:  nid,
			addr: fmt.Sprintf("10.10.0.%d", i+2),
			mask: "255.255.255.0",
			mac:  fmt.Sprintf("02:42:0a:0a:00:%02x", i+2),
		}
		n.addEndpoint(ep)
		d.peerDbAdd(nid, ep.id, ep.addr, ep.mask, ep.mac, "10.0.0.1", true)
	}

	// Meanwhile a container starts on the neighbor: once this node is in the cluster, serf
	// delivers the neighbor's join event to this node.
	clusterEvents = []Event{UserEvent{
		Name:    fmt.Sprintf("jl %s %s %s", "10.0.0.2", nid, "remote-ep"),
		Payload: []byte("join 10.10.0.200 255.255.255.0 02:42:0a:0a:00:c8"),
	}}

	// The discovery watcher reports this node: start serf, join the neighbor and push the local
	// endpoints to the cluster.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.nodeJoin("10.0.0.1", "0.0.0.0", true)
	}()
	wg.Wait()

	// Leave the cluster: the serf loop answers on the exit channel once it is done.
	ch := make(chan struct{})
	d.exitCh <- ch
	<-ch
	fmt.Println("announced", len(d.serfInstance.sent), "local endpoints; peers in db:", len(d.peerDb.mp[nid].mp))
}
