// Project: slackhq/nebula (hostmap.go, relay teardown in HostMap.DeleteHostInfo / HostMap.RemoveRelay), v1.6.x, 2022 (approximate).
// Bug: when relays were added, DeleteHostInfo kept the hostmap write lock (hm.Lock with a deferred Unlock) while it tore
// down the relays that went through the deleted host, and RemoveRelay takes hm.Lock again, so closing a tunnel to a
// host that relays for others self-deadlocks the hostmap; the fix releases hm before walking the relay state.
package main

import (
	"fmt"
	"sync"
)

type VpnIp uint32

func (ip VpnIp) String() string {
	return fmt.Sprintf("10.1.0.%d", uint32(ip)&0xff)
}

type RelayState int

const (
	Requested RelayState = iota
	Established
)

type Relay struct {
	Type        int
	State       RelayState
	LocalIndex  uint32
	RemoteIndex uint32
	PeerIp      VpnIp
}

// RelayStateTracker is nebula's per-hostinfo relay bookkeeping (HostInfo.relayState).
type RelayStateTracker struct {
	sync.RWMutex
	relays        map[VpnIp]struct{}
	relayForByIp  map[VpnIp]*Relay
	relayForByIdx map[uint32]*Relay
}

func (rs *RelayStateTracker) CopyRelayForIdxs() []uint32 {
	rs.RLock()
	defer rs.RUnlock()
	ret := make([]uint32, 0, len(rs.relayForByIdx))
	for i := range rs.relayForByIdx {
		ret = append(ret, i)
	}
	return ret
}

func (rs *RelayStateTracker) RemoveRelay(localIdx uint32) (VpnIp, bool) {
	rs.Lock()
	defer rs.Unlock()
	r, ok := rs.relayForByIdx[localIdx]
	if !ok {
		return 0, false
	}
	delete(rs.relayForByIdx, localIdx)
	delete(rs.relayForByIp, r.PeerIp)
	return r.PeerIp, true
}

func (rs *RelayStateTracker) InsertRelay(ip VpnIp, idx uint32, r *Relay) {
	rs.Lock()
	defer rs.Unlock()
	rs.relayForByIp[ip] = r
	rs.relayForByIdx[idx] = r
}

type HostInfo struct {
	sync.RWMutex
	vpnIp         VpnIp
	localIndexId  uint32
	remoteIndexId uint32
	relayState    RelayStateTracker
}

type HostMap struct {
	sync.RWMutex
	name          string
	Indexes       map[uint32]*HostInfo
	Relays        map[uint32]*HostInfo
	RemoteIndexes map[uint32]*HostInfo
	Hosts         map[VpnIp]*HostInfo
}

func NewHostMap(name string) *HostMap {
	return &HostMap{
		name:          name,
		Indexes:       map[uint32]*HostInfo{},
		Relays:        map[uint32]*HostInfo{},
		RemoteIndexes: map[uint32]*HostInfo{},
		Hosts:         map[VpnIp]*HostInfo{},
	}
}

func (hm *HostMap) AddHostInfo(hi *HostInfo) {
	hm.Lock()
	defer hm.Unlock()
	hm.Hosts[hi.vpnIp] = hi
	hm.Indexes[hi.localIndexId] = hi
	hm.RemoteIndexes[hi.remoteIndexId] = hi
}

func (hm *HostMap) AddRelay(localIdx uint32, hi *HostInfo) {
	hm.Lock()
	defer hm.Unlock()
	hm.Relays[localIdx] = hi
}

// RemoveRelay drops a relay index from the hostmap and from the relaying host's state.
func (hm *HostMap) RemoveRelay(localIdx uint32) {
	hm.Lock()
	hiRelay, ok := hm.Relays[localIdx]
	if !ok {
		hm.Unlock()
		return
	}
	delete(hm.Relays, localIdx)
	hm.Unlock()
	ip, ok := hiRelay.relayState.RemoveRelay(localIdx)
	if !ok {
		return
	}
	fmt.Printf("%s: removed relay %d for %s\n", hm.name, localIdx, ip)
}

func (hm *HostMap) unlockedDeleteHostInfo(hostinfo *HostInfo) {
	delete(hm.Hosts, hostinfo.vpnIp)
	delete(hm.Indexes, hostinfo.localIndexId)
	delete(hm.RemoteIndexes, hostinfo.remoteIndexId)
}

// DeleteHostInfo (fixed): delete the host itself, then release the hostmap before tearing down relays.
func (hm *HostMap) DeleteHostInfo(hostinfo *HostInfo) {
	hm.Lock()
	hm.unlockedDeleteHostInfo(hostinfo)
	hm.Unlock()

	// And tear down all the relays going through this host
	for _, localIdx := range hostinfo.relayState.CopyRelayForIdxs() {
		hm.RemoveRelay(localIdx)
	}
}

type Interface struct {
	hostMap *HostMap
}

func (f *Interface) closeTunnel(hostInfo *HostInfo) {
	f.hostMap.DeleteHostInfo(hostInfo)
}

type connectionManager struct {
	intf    *Interface
	hostMap *HostMap
}

// doTrafficCheck: the tunnel went quiet and the test packet got no answer, so tear it down.
func (n *connectionManager) doTrafficCheck(localIndex uint32) {
	n.hostMap.RLock()
	hostinfo := n.hostMap.Indexes[localIndex]
	n.hostMap.RUnlock()
	if hostinfo == nil {
		return
	}
	fmt.Printf("tunnel to %s is dead, closing\n", hostinfo.vpnIp)
	n.intf.closeTunnel(hostinfo)
}

func newHostInfo(ip VpnIp, local, remote uint32) *HostInfo {
	return &HostInfo{vpnIp: ip, localIndexId: local, remoteIndexId: remote, relayState: RelayStateTracker{
		relays:        map[VpnIp]struct{}{},
		relayForByIp:  map[VpnIp]*Relay{},
		relayForByIdx: map[uint32]*Relay{},
	}}
}

func main() {
	hm := NewHostMap("main")
	f := &Interface{hostMap: hm}
	cm := &connectionManager{intf: f, hostMap: hm}

	// We are a relay: host A reaches host B through us.
	a := newHostInfo(2, 100, 200)
	b := newHostInfo(3, 101, 201)
	hm.AddHostInfo(a)
	hm.AddHostInfo(b)
	a.relayState.InsertRelay(b.vpnIp, 500, &Relay{State: Established, LocalIndex: 500, PeerIp: b.vpnIp})
	hm.AddRelay(500, a)

	cm.doTrafficCheck(a.localIndexId)
	fmt.Println("tunnel closed")
}
