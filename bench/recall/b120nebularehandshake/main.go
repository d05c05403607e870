// Project: slackhq/nebula (connection_manager.go connectionManager.makeTrafficDecision and tryRehandshake, handshake_manager.go HandshakeManager.AddVpnIp and Complete, hostmap.go HostMap.AddVpnIp), v1.7.0 development, spring 2023 (PR #863, merged May 2023; whether the buggy code reached a tagged release is uncertain).
// Bug: after a certificate reload the connection manager re-handshakes every live tunnel, and makeTrafficDecision called tryRehandshake while it still held the main hostmap read lock; tryRehandshake registers the new handshake with HandshakeManager.AddVpnIp, which locks the pending hostmap. The listener goroutine finishing another handshake runs HandshakeManager.Complete, which locks the pending hostmap and then the main hostmap, so the two goroutines deadlock AB-BA on the main and pending hostmap locks. The fix returns a tryRehandshake decision and re-handshakes after the read lock is released.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type VpnIp uint32

type CertState struct{ signature string }

type ConnectionState struct{ certState *CertState }

type HostInfo struct {
	remote          string
	vpnIp           VpnIp
	localIndexId    uint32
	HandshakeReady  bool
	ConnectionState *ConnectionState
}

type HostMap struct {
	sync.RWMutex
	name    string
	Indexes map[uint32]*HostInfo
	Hosts   map[VpnIp]*HostInfo
}

func NewHostMap(name string) *HostMap {
	return &HostMap{name: name, Indexes: map[uint32]*HostInfo{}, Hosts: map[VpnIp]*HostInfo{}}
}

func (hm *HostMap) AddVpnIp(vpnIp VpnIp, init func(hostinfo *HostInfo)) (hostinfo *HostInfo, created bool) {
	hm.RLock()
	if h, ok := hm.Hosts[vpnIp]; ok {
		hm.RUnlock()
		return h, false
	}
	hm.RUnlock()
	h := &HostInfo{vpnIp: vpnIp}
	if init != nil {
		init(h)
	}
	hm.Lock()
	hm.Hosts[vpnIp] = h
	hm.Unlock()
	return h, true
}

func (hm *HostMap) unlockedAddHostInfo(hostinfo *HostInfo) {
	hm.Hosts[hostinfo.vpnIp] = hostinfo
	hm.Indexes[hostinfo.localIndexId] = hostinfo
}

func (hm *HostMap) unlockedDeleteHostInfo(hostinfo *HostInfo) {
	delete(hm.Hosts, hostinfo.vpnIp)
	delete(hm.Indexes, hostinfo.localIndexId)
}

type HandshakeManager struct {
	pendingHostMap *HostMap
	mainHostMap    *HostMap
	outside        chan string
}

func (c *HandshakeManager) AddVpnIp(vpnIp VpnIp, init func(*HostInfo)) *HostInfo {
	hostinfo, _ := c.pendingHostMap.AddVpnIp(vpnIp, init)
	return hostinfo
}

// Complete is a simpler version of CheckAndComplete when we already know we
// won't have a localIndexId collision because we already have an entry in the pendingHostMap.
func (c *HandshakeManager) Complete(hostinfo *HostInfo, f *Interface) {
	c.pendingHostMap.Lock()
	defer c.pendingHostMap.Unlock()
	c.mainHostMap.Lock()
	defer c.mainHostMap.Unlock()

	if existing, found := c.mainHostMap.Hosts[hostinfo.vpnIp]; found && existing != nil {
		// We are going to overwrite this entry, so remove the old references
		c.mainHostMap.unlockedDeleteHostInfo(existing)
	}
	// We need to remove from the pending hostmap first to avoid undoing work when after to the main hostmap.
	c.pendingHostMap.unlockedDeleteHostInfo(hostinfo)
	c.mainHostMap.unlockedAddHostInfo(hostinfo)
}

func ixHandshakeStage0(f *Interface, vpnIp VpnIp, hostinfo *HostInfo) {
	hostinfo.HandshakeReady = true
	f.handshakeManager.outside <- fmt.Sprintf("handshake stage 0 -> %08x", uint32(vpnIp))
}

type Interface struct {
	certState        atomic.Pointer[CertState]
	hostMap          *HostMap
	handshakeManager *HandshakeManager
}

func (f *Interface) initHostInfo(hostinfo *HostInfo) {
	hostinfo.ConnectionState = &ConnectionState{certState: f.certState.Load()}
}

type Logger interface{ Info(msg string, vpnIp VpnIp) }

type trafficDecision int

const (
	doNothing trafficDecision = iota
	deleteTunnel
	swapPrimary
)

type connectionManager struct {
	in              map[uint32]struct{}
	pendingDeletion map[uint32]struct{}
	hostMap         *HostMap
	intf            *Interface
	l               Logger
}

func (n *connectionManager) doTrafficCheck(localIndex uint32) {
	decision, hostinfo := n.makeTrafficDecision(localIndex)
	switch decision {
	case deleteTunnel, swapPrimary:
		fmt.Println("decision", decision, "for", hostinfo.vpnIp)
	}
}

func (n *connectionManager) makeTrafficDecision(localIndex uint32) (trafficDecision, *HostInfo) {
	n.hostMap.RLock()
	defer n.hostMap.RUnlock()

	hostinfo := n.hostMap.Indexes[localIndex]
	if hostinfo == nil {
		return doNothing, nil
	}
	primary := n.hostMap.Hosts[hostinfo.vpnIp]
	mainHostInfo := primary == nil || primary == hostinfo

	// A hostinfo is determined alive if there is incoming traffic
	if _, inTraffic := n.in[localIndex]; inTraffic {
		delete(n.in, localIndex)
		delete(n.pendingDeletion, hostinfo.localIndexId)
		if mainHostInfo {
			n.tryRehandshake(hostinfo)
			return doNothing, hostinfo
		}
		return swapPrimary, hostinfo
	}
	if _, ok := n.pendingDeletion[hostinfo.localIndexId]; ok {
		return deleteTunnel, hostinfo
	}
	n.pendingDeletion[hostinfo.localIndexId] = struct{}{}
	return doNothing, hostinfo
}

func (n *connectionManager) tryRehandshake(hostinfo *HostInfo) {
	certState := n.intf.certState.Load()
	if hostinfo.ConnectionState.certState.signature == certState.signature {
		return
	}
	n.l.Info("Re-handshaking with remote", hostinfo.vpnIp)

	//TODO: this is copied from getOrHandshake to keep the extra checks out of the hot path, figure it out
	newHostinfo := n.intf.handshakeManager.AddVpnIp(hostinfo.vpnIp, n.intf.initHostInfo)
	if !newHostinfo.HandshakeReady {
		ixHandshakeStage0(n.intf, newHostinfo.vpnIp, newHostinfo)
	}
}

// stepLogger forces the interleaving: a handshake response arrives right after the re-handshake starts.
type stepLogger struct{ rehandshake chan struct{} }

func (s *stepLogger) Info(msg string, vpnIp VpnIp) {
	close(s.rehandshake)
	time.Sleep(100 * time.Millisecond)
}

func main() {
	mainHostMap, pendingHostMap := NewHostMap("main"), NewHostMap("pending")
	oldCert, newCert := &CertState{signature: "sig-2022"}, &CertState{signature: "sig-2023"}
	peerA := &HostInfo{remote: "198.51.100.2:4242", vpnIp: 0x0a000002, localIndexId: 200, ConnectionState: &ConnectionState{certState: oldCert}}
	mainHostMap.unlockedAddHostInfo(peerA)
	peerB := &HostInfo{remote: "198.51.100.3:4242", vpnIp: 0x0a000003, localIndexId: 300, ConnectionState: &ConnectionState{certState: newCert}}
	pendingHostMap.unlockedAddHostInfo(peerB)

	f := &Interface{hostMap: mainHostMap,
		handshakeManager: &HandshakeManager{pendingHostMap: pendingHostMap, mainHostMap: mainHostMap, outside: make(chan string, 8)}}
	f.certState.Store(newCert) // the certificate was just reloaded
	log := &stepLogger{rehandshake: make(chan struct{})}
	n := &connectionManager{in: map[uint32]struct{}{200: {}}, pendingDeletion: map[uint32]struct{}{}, hostMap: mainHostMap, intf: f, l: log}

	cmDone, listenerDone := make(chan struct{}), make(chan struct{})
	go func() { // connection manager: traffic check of the tunnel to A
		n.doTrafficCheck(200)
		close(cmDone)
	}()
	go func() { // listener: ixHandshakeStage2 for B calls Complete
		<-log.rehandshake
		f.handshakeManager.Complete(peerB, f)
		close(listenerDone)
	}()
	<-cmDone
	<-listenerDone
	fmt.Println(<-f.handshakeManager.outside, "; main hostmap has", len(mainHostMap.Hosts), "hosts")
}
