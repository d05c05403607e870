// Project: moby/libnetwork (drivers/overlay/ov_network.go, drivers/overlay/peerdb.go,
// drivers/overlay/joinleave.go, drivers/overlay/ov_endpoint.go)
// Issue: moby/libnetwork#2180 "Fix spurious deadlock in overlay driver"
// (18.03 backport moby/libnetwork#2182; regression from commit bd613df2)
//
// Bug: commit bd613df2 made driver.DeleteNetwork hold the driver lock d.Lock()
// (line 294) for the whole delete so that it cannot race with CreateNetwork.
// Part of the delete is flushing the peer DB: d.peerFlush(nid) hands a
// peerOperation to the peerDB goroutine over the synchronous channel
// d.peerOpCh (send at line 238) and waits for peerOpRoutine to take it. But
// peerOpRoutine may be busy with an earlier operation, e.g. a peerAdd queued
// by EventNotify for a remote endpoint learned through NetworkDB; peerAddOp
// looks the network up with d.network(nid), which takes d.Lock() (line 157).
// DeleteNetwork holds d.Lock and waits for peerOpRoutine; peerOpRoutine waits
// for d.Lock: the overlay driver, and with it every network operation of the
// daemon, is stuck. The fix defers the flush until after DeleteNetwork has
// released the driver lock.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

const (
	peerOperationINIT = iota
	peerOperationADD
	peerOperationDELETE
	peerOperationFLUSH
)

// IP, IPMask and HardwareAddr stand in for the net package types
// (importing net links the cgo resolver, which hides the runtime's deadlock
// report).
type (
	IP           string
	IPMask       string
	HardwareAddr string
)

func (ip IP) String() string          { return string(ip) }
func (m HardwareAddr) String() string { return string(m) }

type peerOperation struct {
	opType     int
	networkID  string
	endpointID string
	peerIP     IP
	peerIPMask IPMask
	peerMac    HardwareAddr
	vtepIP     IP
	l2Miss     bool
	l3Miss     bool
	localPeer  bool
	callerName string
}

type peerEntry struct {
	eid        string
	vtep       IP
	peerIPMask IPMask
	isLocal    bool
}

type peerMap struct {
	// set of peerEntry, note the values have to be objects and not pointers to maintain the proper equality checks
	mp map[string][]peerEntry
	sync.Mutex
}

type peerNetworkMap struct {
	// map with key peerKey
	mp map[string]*peerMap
	sync.Mutex
}

// KVObject and DataStore stand in for libnetwork/datastore.
type KVObject interface {
	Key() []string
}

type DataStore interface {
	DeleteObjectAtomic(kvObject KVObject) error
}

type endpoint struct {
	id     string
	nid    string
	ifName string
	mac    HardwareAddr
	addr   string
}

func (ep *endpoint) Key() []string {
	return []string{"overlay", "endpoint", ep.id}
}

type network struct {
	id        string
	endpoints map[string]*endpoint
	vxlanIDs  []uint32
	sync.Mutex
}

type driver struct {
	bindAddress      string
	advertiseAddress string
	peerDb           peerNetworkMap
	networks         map[string]*network
	store            DataStore
	localStore       DataStore
	peerOpCh         chan *peerOperation
	peerOpCancel     context.CancelFunc
	sync.Mutex
}

func validateID(nid, eid string) error {
	if nid == "" {
		return errors.New("invalid network id")
	}
	if eid == "" {
		return errors.New("invalid endpoint id")
	}
	return nil
}

func (d *driver) peerOpRoutine(ctx context.Context, ch chan *peerOperation) {
	var err error
	for {
		select {
		case <-ctx.Done():
			return
		case op := <-ch:
			switch op.opType {
			case peerOperationADD:
				err = d.peerAddOp(op.networkID, op.endpointID, op.peerIP, op.peerIPMask, op.peerMac, op.vtepIP, op.l2Miss, op.l3Miss, true, op.localPeer)
			case peerOperationFLUSH:
				err = d.peerFlushOp(op.networkID)
			}
			if err != nil {
				fmt.Printf("peerOpRoutine: %s: %v\n", op.callerName, err)
			}
		}
	}
}

func (d *driver) getNetworkFromStore(nid string) *network {
	if d.store == nil {
		return nil
	}
	return nil
}

func (d *driver) network(nid string) *network {
	d.Lock()
	n, ok := d.networks[nid]
	d.Unlock()
	if !ok {
		n = d.getNetworkFromStore(nid)
		if n != nil {
			d.Lock()
			d.networks[nid] = n
			d.Unlock()
		}
	}

	return n
}

func (d *driver) peerDbAdd(nid, eid string, peerIP IP, peerIPMask IPMask,
	peerMac HardwareAddr, vtep IP, isLocal bool) (bool, int) {

	d.peerDb.Lock()
	pMap, ok := d.peerDb.mp[nid]
	if !ok {
		d.peerDb.mp[nid] = &peerMap{
			mp: make(map[string][]peerEntry),
		}

		pMap = d.peerDb.mp[nid]
	}
	d.peerDb.Unlock()

	pKey := peerIP.String() + "-" + peerMac.String()
	pEntry := peerEntry{eid: eid, vtep: vtep, peerIPMask: peerIPMask, isLocal: isLocal}

	pMap.Lock()
	defer pMap.Unlock()
	pMap.mp[pKey] = append(pMap.mp[pKey], pEntry)
	return true, len(pMap.mp[pKey])
}

func (d *driver) peerAdd(nid, eid string, peerIP IP, peerIPMask IPMask,
	peerMac HardwareAddr, vtep IP, l2Miss, l3Miss, localPeer bool) {
	d.peerOpCh <- &peerOperation{
		opType:     peerOperationADD,
		networkID:  nid,
		endpointID: eid,
		peerIP:     peerIP,
		peerIPMask: peerIPMask,
		peerMac:    peerMac,
		vtepIP:     vtep,
		l2Miss:     l2Miss,
		l3Miss:     l3Miss,
		localPeer:  localPeer,
		callerName: "EventNotify",
	}
}

func (d *driver) peerAddOp(nid, eid string, peerIP IP, peerIPMask IPMask,
	peerMac HardwareAddr, vtep IP, l2Miss, l3Miss, updateDB, localPeer bool) error {

	if err := validateID(nid, eid); err != nil {
		return err
	}

	if updateDB {
		d.peerDbAdd(nid, eid, peerIP, peerIPMask, peerMac, vtep, localPeer)
	}

	// Local peers do not need any further configuration
	if localPeer {
		return nil
	}

	n := d.network(nid)
	if n == nil {
		return nil
	}

	// programming the vxlan fdb / neighbor entries in the sandbox is elided
	return nil
}

func (d *driver) peerFlush(nid string) {
	d.peerOpCh <- &peerOperation{
		opType:     peerOperationFLUSH,
		networkID:  nid,
		callerName: "DeleteNetwork",
	}
}

func (d *driver) peerFlushOp(nid string) error {
	d.peerDb.Lock()
	defer d.peerDb.Unlock()
	_, ok := d.peerDb.mp[nid]
	if !ok {
		return fmt.Errorf("Unable to find the peerDB for nid:%s", nid)
	}
	delete(d.peerDb.mp, nid)
	return nil
}

// EventNotify is called by libnetwork's agent when NetworkDB reports a
// change in the overlay peer table.
func (d *driver) EventNotify(etype string, nid, tableName, key string, value []byte) {
	if tableName != "overlay_peer_table" {
		return
	}
	eid := key
	peerIP, peerIPMask := IP("10.0.9.7"), IPMask("ffffff00")
	peerMac := HardwareAddr("02:42:0a:00:09:07")
	vtep := IP(string(value))

	if etype == "delete" {
		return
	}
	d.peerAdd(nid, eid, peerIP, peerIPMask, peerMac, vtep, false, false, false)
}

func (d *driver) deleteEndpointFromStore(e *endpoint) error {
	if d.localStore == nil {
		return fmt.Errorf("overlay local store not initialized, ep not deleted")
	}

	return d.localStore.DeleteObjectAtomic(e)
}

func (n *network) releaseVxlanID() ([]uint32, error) {
	n.Lock()
	vnis := n.vxlanIDs
	n.vxlanIDs = nil
	n.Unlock()
	return vnis, nil
}

func (d *driver) DeleteNetwork(nid string) error {
	if nid == "" {
		return fmt.Errorf("invalid network id")
	}

	d.Lock()
	// Only perform a peer flush operation (if required) AFTER unlocking
	// the driver lock to avoid deadlocking w/ the peerDB.
	var doPeerFlush bool
	defer func() {
		d.Unlock()
		if doPeerFlush {
			d.peerFlush(nid)
		}
	}()

	// This is similar to d.network(), but we need to keep holding the lock
	// until we are done removing this network.
	n, ok := d.networks[nid]
	if !ok {
		n = d.getNetworkFromStore(nid)
	}
	if n == nil {
		return fmt.Errorf("could not find network with id %s", nid)
	}

	for _, ep := range n.endpoints {
		if err := d.deleteEndpointFromStore(ep); err != nil {
			fmt.Printf("Failed to delete overlay endpoint %.7s from local store: %v\n", ep.id, err)
		}
	}
	// flush the peerDB entries
	doPeerFlush = true
	delete(d.networks, nid)

	if _, err := n.releaseVxlanID(); err != nil {
		return err
	}

	return nil
}

// boltdbStore is the test double for the driver's local store. It tells the
// caller when the first delete reaches it and holds that delete until released.
type boltdbStore struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (s *boltdbStore) DeleteObjectAtomic(kvObject KVObject) error {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return nil
}

func main() {
	store := &boltdbStore{entered: make(chan struct{}), release: make(chan struct{})}
	d := &driver{
		bindAddress:      "192.168.1.10",
		advertiseAddress: "192.168.1.10",
		peerDb:           peerNetworkMap{mp: map[string]*peerMap{}},
		networks:         map[string]*network{},
		localStore:       store,
		peerOpCh:         make(chan *peerOperation),
	}
	ctx, cancel := context.WithCancel(context.Background())
	go d.peerOpRoutine(ctx, d.peerOpCh)
	d.peerOpCancel = cancel

	nid := "ovnet1"
	d.networks[nid] = &network{
		id:       nid,
		vxlanIDs: []uint32{4097},
		endpoints: map[string]*endpoint{
			"ep1": {id: "ep1", nid: nid, ifName: "veth0"},
		},
	}
	d.peerDb.mp[nid] = &peerMap{mp: map[string][]peerEntry{}}

	// docker network rm ovnet1
	deleted := make(chan error)
	go func() { deleted <- d.DeleteNetwork(nid) }()

	// While the delete is removing endpoints from the local store (holding
	// d.Lock), NetworkDB reports a remote peer on that network.
	<-store.entered
	d.EventNotify("create", nid, "overlay_peer_table", "ep-remote-9", []byte("192.168.1.11"))
	close(store.release)

	if err := <-deleted; err != nil {
		fmt.Println("delete network:", err)
	}
	d.peerOpCancel()
	fmt.Println("network deleted")
}
