// Project: slackhq/nebula (connection_manager.go connectionManager.doTrafficCheck and makeTrafficDecision, inside.go Interface.SendMessageToHostInfo and sendNoMetrics, hostmap.go HostMap.QueryVpnIpRelayFor, handshake_manager.go HandshakeManager.Complete), v1.8.0, December 2023.
// Bug: makeTrafficDecision holds the main hostmap read lock for the whole decision and, for a tunnel that sent but did not receive traffic, sends the authenticated test packet from inside it; when the peer is only reachable through a relay, sendNoMetrics looks the relay up with HostMap.QueryVpnIpRelayFor, which read-locks the hostmap again. A handshake completing on the listener goroutine (HandshakeManager.Complete takes the hostmap write lock) between the two read locks deadlocks the connection manager and the listener (second case fixed by PR #1044 "Fix re-entrant GetOrHandshake issues", v1.8.1, which returns a sendTestPacket decision and sends the test packet after the read lock is released).
package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

type VpnIp uint32
type MessageType uint8

const headerTest, headerTestRequest MessageType = 4, 0
const Established = 1

type Relay struct {
	State       int
	RemoteIndex uint32
	PeerIp      VpnIp
}

type RelayState struct {
	sync.RWMutex
	relays       map[VpnIp]struct{} // VpnIps of the hosts used as relays to reach this peer
	relayForByIp map[VpnIp]*Relay   // peers for which this host is a relay
}

func (rs *RelayState) CopyRelayIps() []VpnIp {
	rs.RLock()
	defer rs.RUnlock()
	return slices.Collect(maps.Keys(rs.relays))
}

func (rs *RelayState) QueryRelayForByIp(vpnIp VpnIp) (*Relay, bool) {
	rs.RLock()
	defer rs.RUnlock()
	r, ok := rs.relayForByIp[vpnIp]
	return r, ok
}

type HostInfo struct {
	remote       string // empty when the peer is only reachable through relays
	vpnIp        VpnIp
	localIndexId uint32
	relayState   RelayState
}

type HostMap struct {
	sync.RWMutex
	Indexes map[uint32]*HostInfo
	Hosts   map[VpnIp]*HostInfo
}

func (hm *HostMap) QueryVpnIpRelayFor(targetIp, relayHostIp VpnIp) (*HostInfo, *Relay, error) {
	hm.RLock()
	defer hm.RUnlock()
	h, ok := hm.Hosts[relayHostIp]
	if !ok {
		return nil, nil, errors.New("unable to find host")
	}
	if r, ok := h.relayState.QueryRelayForByIp(targetIp); ok && r.State == Established {
		return h, r, nil
	}
	return nil, nil, errors.New("unable to find host with relay")
}

func (hm *HostMap) unlockedAddHostInfo(hostinfo *HostInfo) {
	hm.Hosts[hostinfo.vpnIp] = hostinfo
	hm.Indexes[hostinfo.localIndexId] = hostinfo
}

type HandshakeManager struct {
	sync.RWMutex
	vpnIps      map[VpnIp]*HostInfo
	mainHostMap *HostMap
}

// Complete moves a finished handshake into the main hostmap.
func (hm *HandshakeManager) Complete(hostinfo *HostInfo, f *Interface) {
	hm.mainHostMap.Lock()
	defer hm.mainHostMap.Unlock()
	hm.Lock()
	defer hm.Unlock()
	delete(hm.vpnIps, hostinfo.vpnIp)
	hm.mainHostMap.unlockedAddHostInfo(hostinfo)
}

type Interface struct {
	hostMap *HostMap
	outside chan string // the udp writer
}

func (f *Interface) SendMessageToHostInfo(t, st MessageType, hostinfo *HostInfo, p, nb, out []byte) {
	f.sendNoMetrics(t, st, hostinfo, "", p, nb, out)
}

func (f *Interface) sendNoMetrics(t, st MessageType, hostinfo *HostInfo, remote string, p, nb, out []byte) {
	if remote != "" || hostinfo.remote != "" {
		f.outside <- fmt.Sprintf("%d/%d -> %s", t, st, hostinfo.remote)
		return
	}
	for _, relayIP := range hostinfo.relayState.CopyRelayIps() {
		relayHostInfo, relay, err := f.hostMap.QueryVpnIpRelayFor(hostinfo.vpnIp, relayIP)
		if err != nil {
			continue
		}
		f.SendVia(relayHostInfo, relay, out, nb, p)
		break
	}
}

func (f *Interface) SendVia(via *HostInfo, relay *Relay, ad, nb, out []byte) {
	f.outside <- fmt.Sprintf("test for %08x via relay %d -> %s", uint32(relay.PeerIp), relay.RemoteIndex, via.remote)
}

type Logger interface{ Debug(msg, state string) }

type trafficDecision int

const doNothing, deleteTunnel trafficDecision = 0, 1

// connectionManager runs on its own goroutine, driven by a timer wheel of local indexes.
type connectionManager struct {
	in, out         map[uint32]struct{}
	pendingDeletion map[uint32]struct{}
	hostMap         *HostMap
	intf            *Interface
	l               Logger
}

func (n *connectionManager) getAndResetTrafficCheck(localIndex uint32) (in bool, out bool) {
	_, in = n.in[localIndex]
	_, out = n.out[localIndex]
	delete(n.in, localIndex)
	delete(n.out, localIndex)
	return in, out
}

func (n *connectionManager) doTrafficCheck(localIndex uint32, p, nb, out []byte) {
	decision, hostinfo := n.makeTrafficDecision(localIndex, p, nb, out)
	if decision == deleteTunnel {
		fmt.Println("tunnel dead:", hostinfo.vpnIp)
	}
}

func (n *connectionManager) makeTrafficDecision(localIndex uint32, p, nb, out []byte) (trafficDecision, *HostInfo) {
	n.hostMap.RLock()
	defer n.hostMap.RUnlock()

	hostinfo := n.hostMap.Indexes[localIndex]
	if hostinfo == nil {
		return doNothing, nil
	}
	inTraffic, outTraffic := n.getAndResetTrafficCheck(localIndex)
	if inTraffic {
		return doNothing, hostinfo
	}
	if _, ok := n.pendingDeletion[hostinfo.localIndexId]; ok {
		// We have already sent a test packet and nothing was returned, this hostinfo is dead
		return deleteTunnel, hostinfo
	}
	if outTraffic {
		n.l.Debug("Tunnel status", "testing")
		// Send a test packet to trigger an authenticated tunnel test, this should suss out any lingering tunnel issues
		n.intf.SendMessageToHostInfo(headerTest, headerTestRequest, hostinfo, p, nb, out)
	}
	n.pendingDeletion[hostinfo.localIndexId] = struct{}{}
	return doNothing, hostinfo
}

// stepLogger forces the interleaving: the listener completes a handshake right after the tunnel test starts.
type stepLogger struct{ testing chan struct{} }

func (s *stepLogger) Debug(msg, state string) {
	if state == "testing" {
		close(s.testing)
		time.Sleep(100 * time.Millisecond)
	}
}

func main() {
	relayIp, peerIp, newIp := VpnIp(0x0a000001), VpnIp(0x0a000007), VpnIp(0x0a000009)
	relayHost := &HostInfo{remote: "198.51.100.1:4242", vpnIp: relayIp, localIndexId: 100,
		relayState: RelayState{relayForByIp: map[VpnIp]*Relay{peerIp: {State: Established, RemoteIndex: 77, PeerIp: peerIp}}}}
	peer := &HostInfo{vpnIp: peerIp, localIndexId: 300, relayState: RelayState{relays: map[VpnIp]struct{}{relayIp: {}}}}
	hostMap := &HostMap{Indexes: map[uint32]*HostInfo{100: relayHost, 300: peer},
		Hosts: map[VpnIp]*HostInfo{relayIp: relayHost, peerIp: peer}}
	pending := &HostInfo{remote: "203.0.113.9:4242", vpnIp: newIp, localIndexId: 400}
	hsm := &HandshakeManager{vpnIps: map[VpnIp]*HostInfo{newIp: pending}, mainHostMap: hostMap}
	f := &Interface{hostMap: hostMap, outside: make(chan string, 8)}
	log := &stepLogger{testing: make(chan struct{})}
	n := &connectionManager{in: map[uint32]struct{}{}, out: map[uint32]struct{}{300: {}},
		pendingDeletion: map[uint32]struct{}{}, hostMap: hostMap, intf: f, l: log}

	cmDone, hsDone := make(chan struct{}), make(chan struct{})
	go func() { // connection manager: traffic check of the relayed tunnel
		n.doTrafficCheck(300, nil, make([]byte, 12), make([]byte, 9001))
		close(cmDone)
	}()
	go func() { // listener: ixHandshakeStage2 finished the handshake with newIp
		<-log.testing
		hsm.Complete(pending, f)
		close(hsDone)
	}()
	<-cmDone
	<-hsDone
	fmt.Println("sent:", <-f.outside)
}
