// Project: openshift/sdn (OpenShift SDN node process), OpenShift 4.8/4.9, 2021.
// Files/functions: pkg/network/common/egressip.go (EgressIPTracker.UpdateNetNamespaceEgress, syncEgressIPs,
// syncEgressNodeState, lookupNodeIP, Ping; EgressIPWatcher interface), pkg/network/node/egressip.go
// (egressIPWatcher.ClaimEgressIP, addEgressIP, check, getOfflineResult, monitorNodesLock).
// Issue/PR: Bugzilla 2013707, openshift/sdn#359 "Remove locking from EgressIPTracker.Ping"
// (merged to release-4.9 as #360 and release-4.8 as #362).
//
// The node's egress IP watcher polls the nodes hosting egress IPs: getOfflineResult holds
// monitorNodesLock for the whole pass and calls tracker.Ping per node; Ping maps the node IP to its
// SDN IP with lookupNodeIP, which locks the EgressIPTracker (embedded sync.Mutex), then dials, which
// takes the full timeout for an unreachable node. A NetNamespace or HostSubnet event runs
// UpdateNetNamespaceEgress with the tracker locked, and syncEgressIPs hands the new egress IP to the
// watcher through the EgressIPWatcher interface; ClaimEgressIP -> addEgressIP needs monitorNodesLock.
// Poller: monitorNodesLock then tracker; event handler: tracker then monitorNodesLock. The fix passes
// the SDN IP to ClaimEgressIP, keeps it in the monitored node, and Ping no longer locks the tracker.
package main

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// dialTimeout stands for net.DialTimeout; an offline node makes it wait the whole timeout.
var dialTimeout = func(network, address string, timeout time.Duration) (io.Closer, error) {
	time.Sleep(timeout)
	return nil, errors.New("i/o timeout")
}

type EgressIPWatcher interface {
	ClaimEgressIP(vnid uint32, egressIP, nodeIP, sdnIP string)
}

type nodeEgress struct {
	nodeIP, sdnIP string
}

type egressIPInfo struct {
	ip             string
	nodes          []*nodeEgress
	namespaces     []uint32
	assignedNodeIP string
}

type EgressIPTracker struct {
	sync.Mutex
	watcher          EgressIPWatcher
	nodesByNodeIP    map[string]*nodeEgress
	egressIPs        map[string]*egressIPInfo
	changedEgressIPs map[*egressIPInfo]bool
}

func (eit *EgressIPTracker) ensureEgressIPInfo(egressIP string) *egressIPInfo {
	eg := eit.egressIPs[egressIP]
	if eg == nil {
		eg = &egressIPInfo{ip: egressIP}
		eit.egressIPs[egressIP] = eg
	}
	return eg
}

func (eit *EgressIPTracker) UpdateHostSubnetEgress(hostIP, sdnIP string, egressIPs []string) {
	eit.Lock()
	defer eit.Unlock()
	node := &nodeEgress{nodeIP: hostIP, sdnIP: sdnIP}
	eit.nodesByNodeIP[hostIP] = node
	for _, ip := range egressIPs {
		eg := eit.ensureEgressIPInfo(ip)
		eg.nodes = append(eg.nodes, node)
		eit.changedEgressIPs[eg] = true
	}
	eit.syncEgressIPs()
}

func (eit *EgressIPTracker) UpdateNetNamespaceEgress(netID uint32, egressIPs []string) {
	eit.Lock()
	defer eit.Unlock()
	for _, ip := range egressIPs {
		eg := eit.ensureEgressIPInfo(ip)
		eg.namespaces = append(eg.namespaces, netID)
		eit.changedEgressIPs[eg] = true
	}
	eit.syncEgressIPs()
}

func (eit *EgressIPTracker) syncEgressIPs() {
	changedEgressIPs := eit.changedEgressIPs
	eit.changedEgressIPs = make(map[*egressIPInfo]bool)
	for eg := range changedEgressIPs {
		active := len(eg.nodes) == 1 && len(eg.namespaces) == 1
		eit.syncEgressNodeState(eg, active)
	}
}

func (eit *EgressIPTracker) syncEgressNodeState(eg *egressIPInfo, active bool) {
	if active && eg.assignedNodeIP != eg.nodes[0].nodeIP {
		eg.assignedNodeIP = eg.nodes[0].nodeIP
		eit.watcher.ClaimEgressIP(eg.namespaces[0], eg.ip, eg.assignedNodeIP, eg.nodes[0].sdnIP)
	}
}

// Ping a node on its SDN IP and return whether we think it is online.
// It is required that the IP provided is from SDN, nodes primary IP might drop traffic destined to port 9
func (eit *EgressIPTracker) Ping(sdnIP string, timeout time.Duration) bool {
	conn, err := dialTimeout("tcp", sdnIP+":9", timeout)
	if conn != nil {
		conn.Close()
	}
	return err == nil || err.Error() != "i/o timeout"
}

type egressNode struct {
	nodeIP    string
	sdnIP     string
	offline   bool
	egressIPs map[string]bool
}

type egressIPWatcher struct {
	tracker          *EgressIPTracker
	localIP          string
	monitorNodesLock sync.Mutex
	monitorNodes     map[string]*egressNode
}

func (eip *egressIPWatcher) ClaimEgressIP(vnid uint32, egressIP, nodeIP, sdnIP string) {
	if nodeIP == eip.localIP {
		return // assignEgressIP: add the address and iptables mark locally
	}
	eip.addEgressIP(nodeIP, egressIP, sdnIP)
}

func (eip *egressIPWatcher) addEgressIP(nodeIP, egressIP, sdnIP string) {
	eip.monitorNodesLock.Lock()
	defer eip.monitorNodesLock.Unlock()
	if eip.monitorNodes[nodeIP] != nil {
		eip.monitorNodes[nodeIP].egressIPs[egressIP] = true
		return
	}
	eip.monitorNodes[nodeIP] = &egressNode{nodeIP: nodeIP, sdnIP: sdnIP, egressIPs: map[string]bool{egressIP: true}}
}

func (eip *egressIPWatcher) check(retrying bool) bool {
	_, needRetry := eip.getOfflineResult(retrying) // nodes found offline go to tracker.SetNodeOffline
	return needRetry
}

func (eip *egressIPWatcher) getOfflineResult(retrying bool) (map[string]bool, bool) {
	eip.monitorNodesLock.Lock()
	defer eip.monitorNodesLock.Unlock()
	timeout := 100 * time.Millisecond
	needRetry := false
	offlineResult := make(map[string]bool)
	for _, node := range eip.monitorNodes {
		online := eip.tracker.Ping(node.sdnIP, timeout)
		if !node.offline && !online {
			needRetry = true // retried maxRetries times before the node is marked offline
		}
	}
	return offlineResult, needRetry
}

func main() {
	eip := &egressIPWatcher{localIP: "10.0.0.1", monitorNodes: map[string]*egressNode{}}
	eip.tracker = &EgressIPTracker{watcher: eip, nodesByNodeIP: map[string]*nodeEgress{},
		egressIPs: map[string]*egressIPInfo{}, changedEgressIPs: map[*egressIPInfo]bool{}}
	eip.tracker.UpdateHostSubnetEgress("10.0.0.2", "10.128.2.1", []string{"10.0.0.100", "10.0.0.102"})
	eip.tracker.UpdateHostSubnetEgress("10.0.0.3", "10.128.4.1", []string{"10.0.0.101"})
	eip.tracker.UpdateNetNamespaceEgress(4211, []string{"10.0.0.100"})
	eip.tracker.UpdateNetNamespaceEgress(4212, []string{"10.0.0.101"})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // utilwait.PollUntil(defaultPollInterval, eip.poll, eip.stop)
		defer wg.Done()
		eip.check(false)
	}()
	go func() { // NetNamespace informer: project team-c gets egress IP 10.0.0.102
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		eip.tracker.UpdateNetNamespaceEgress(4213, []string{"10.0.0.102"})
	}()
	wg.Wait()
	fmt.Println("poll done, monitoring", len(eip.monitorNodes), "nodes")
}
