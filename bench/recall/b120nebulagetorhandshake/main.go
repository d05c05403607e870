// Project: slackhq/nebula (handshake_manager.go HandshakeManager.GetOrHandshake and StartHandshake, lighthouse.go LightHouse.QueryServer, inside.go Interface.getOrHandshake and SendMessageToVpnIp, connection_manager.go doTrafficCheck, hostmap.go HostMap.DeleteHostInfo), v1.8.0, December 2023.
// Bug: GetOrHandshake keeps the main hostmap read lock while it starts a handshake for an unknown vpn ip, and StartHandshake asks the lighthouses about that ip through LightHouse.QueryServer, which sends through the EncWriter (Interface.SendMessageToVpnIp) and so re-enters GetOrHandshake and read-locks the main hostmap a second time. When the connection manager goroutine queues for the hostmap write lock (DeleteHostInfo of a dead tunnel) between the two read locks, both goroutines block forever (PR #1044 "Fix re-entrant GetOrHandshake issues", released in v1.8.1, which hands lighthouse queries to a query worker goroutine through a channel).
package main

import (
	"fmt"
	"sync"
	"time"
)

const mtu = 9001

type VpnIp uint32
type MessageType uint8
type counter interface{ Inc(int64) }

const headerMessage, headerLightHouse MessageType = 1, 3

type HostInfo struct {
	remote       string
	vpnIp        VpnIp
	localIndexId uint32
}

type HostMap struct {
	sync.RWMutex
	Indexes map[uint32]*HostInfo
	Hosts   map[VpnIp]*HostInfo
}

func (hm *HostMap) DeleteHostInfo(hostinfo *HostInfo) {
	hm.Lock()
	defer hm.Unlock()
	delete(hm.Indexes, hostinfo.localIndexId)
	delete(hm.Hosts, hostinfo.vpnIp)
}

type HandshakeHostInfo struct {
	packetStore [][]byte
	hostinfo    *HostInfo
}

func (hh *HandshakeHostInfo) cachePacket(t MessageType, st uint8, packet []byte) {
	hh.packetStore = append(hh.packetStore, append([]byte{byte(t), st}, packet...))
}

type HandshakeManager struct {
	sync.RWMutex
	vpnIps          map[VpnIp]*HandshakeHostInfo
	mainHostMap     *HostMap
	lightHouse      *LightHouse
	metricInitiated counter
}

func (hm *HandshakeManager) GetOrHandshake(vpnIp VpnIp, cacheCb func(*HandshakeHostInfo)) (*HostInfo, bool) {
	// Check the main hostmap and maintain a read lock if our host is not there
	hm.mainHostMap.RLock()
	if h, ok := hm.mainHostMap.Hosts[vpnIp]; ok {
		hm.mainHostMap.RUnlock()
		return h, true
	}

	defer hm.mainHostMap.RUnlock()
	return hm.StartHandshake(vpnIp, cacheCb), false
}

// StartHandshake will ensure a handshake is currently being attempted for the provided vpn ip
func (hm *HandshakeManager) StartHandshake(vpnIp VpnIp, cacheCb func(*HandshakeHostInfo)) *HostInfo {
	hm.Lock()
	if hh, ok := hm.vpnIps[vpnIp]; ok {
		if cacheCb != nil {
			cacheCb(hh)
		}
		hm.Unlock()
		return hh.hostinfo
	}
	hostinfo := &HostInfo{vpnIp: vpnIp}
	hh := &HandshakeHostInfo{hostinfo: hostinfo}
	hm.vpnIps[vpnIp] = hh
	hm.metricInitiated.Inc(1)
	if cacheCb != nil {
		cacheCb(hh)
	}
	hm.Unlock()
	hm.lightHouse.QueryServer(vpnIp)
	return hostinfo
}

type EncWriter interface {
	SendMessageToVpnIp(t MessageType, st uint8, vpnIp VpnIp, p, nb, out []byte)
}

type LightHouse struct {
	sync.RWMutex
	lighthouses map[VpnIp]struct{}
	ifce        EncWriter // the Interface
}

func (lh *LightHouse) IsLighthouseIP(vpnIp VpnIp) bool {
	_, ok := lh.lighthouses[vpnIp]
	return ok
}

func (lh *LightHouse) QueryServer(ip VpnIp) {
	if lh.IsLighthouseIP(ip) {
		return
	}
	// Send a query to the lighthouses and hope for the best next time
	msg := fmt.Appendf(nil, "HostQuery %08x", uint32(ip))
	nb, out := make([]byte, 12), make([]byte, mtu)
	for n := range lh.lighthouses {
		lh.ifce.SendMessageToVpnIp(headerLightHouse, 0, n, msg, nb, out)
	}
}

type Interface struct {
	handshakeManager *HandshakeManager
	lightHouse       *LightHouse
	outside          chan string // the udp writer
}

func (f *Interface) getOrHandshake(vpnIp VpnIp, cacheCallback func(*HandshakeHostInfo)) (*HostInfo, bool) {
	return f.handshakeManager.GetOrHandshake(vpnIp, cacheCallback)
}

func (f *Interface) SendMessageToVpnIp(t MessageType, st uint8, vpnIp VpnIp, p, nb, out []byte) {
	hostInfo, ready := f.getOrHandshake(vpnIp, func(hh *HandshakeHostInfo) { hh.cachePacket(t, st, p) })
	if hostInfo != nil && ready {
		f.SendMessageToHostInfo(t, st, hostInfo, p, nb, out)
	}
}

func (f *Interface) SendMessageToHostInfo(t MessageType, st uint8, hi *HostInfo, p, nb, out []byte) {
	f.outside <- fmt.Sprintf("%s -> %s", p, hi.remote)
}

type connectionManager struct {
	hostMap         *HostMap
	intf            *Interface
	pendingDeletion map[uint32]struct{}
}

func (n *connectionManager) makeTrafficDecision(localIndex uint32) (deleteTunnel bool, hostinfo *HostInfo) {
	n.hostMap.RLock()
	defer n.hostMap.RUnlock()
	hostinfo = n.hostMap.Indexes[localIndex]
	// We have already sent a test packet and nothing was returned, this hostinfo is dead
	_, deleteTunnel = n.pendingDeletion[localIndex]
	return hostinfo != nil && deleteTunnel, hostinfo
}

func (n *connectionManager) doTrafficCheck(localIndex uint32) {
	if deleteTunnel, hostinfo := n.makeTrafficDecision(localIndex); deleteTunnel {
		n.hostMap.DeleteHostInfo(hostinfo)
	}
}

// handshakeStarted is installed as metricInitiated so that the connection manager's traffic timer fires while the handshake starts.
type handshakeStarted struct{ ch chan struct{} }

func (h *handshakeStarted) Inc(int64) {
	close(h.ch)
	time.Sleep(100 * time.Millisecond)
}

func main() {
	lhIp, deadIp, peerIp := VpnIp(0x0a000001), VpnIp(0x0a000003), VpnIp(0x0a010007)
	lhHost := &HostInfo{remote: "198.51.100.1:4242", vpnIp: lhIp, localIndexId: 100}
	deadHost := &HostInfo{remote: "203.0.113.9:4242", vpnIp: deadIp, localIndexId: 200}
	hostMap := &HostMap{Indexes: map[uint32]*HostInfo{100: lhHost, 200: deadHost}, Hosts: map[VpnIp]*HostInfo{lhIp: lhHost, deadIp: deadHost}}
	started := make(chan struct{})
	lh := &LightHouse{lighthouses: map[VpnIp]struct{}{lhIp: {}}}
	f := &Interface{lightHouse: lh, outside: make(chan string, 8)}
	f.handshakeManager = &HandshakeManager{vpnIps: map[VpnIp]*HandshakeHostInfo{}, mainHostMap: hostMap,
		lightHouse: lh, metricInitiated: &handshakeStarted{ch: started}}
	lh.ifce = f
	cm := &connectionManager{hostMap: hostMap, intf: f, pendingDeletion: map[uint32]struct{}{200: {}}}

	insideDone, cmDone := make(chan struct{}), make(chan struct{})
	go func() { // first message to a host we have no tunnel with yet
		defer close(insideDone)
		f.SendMessageToVpnIp(headerMessage, 0, peerIp, []byte("ping"), make([]byte, 12), make([]byte, mtu))
	}()
	go func() { // connection manager: the traffic timer fires for the dead tunnel
		<-started
		cm.doTrafficCheck(200)
		close(cmDone)
	}()
	<-insideDone
	<-cmDone
	fmt.Println("lighthouse query sent:", <-f.outside)
}
