// Project: openshift/origin (OpenShift 3.7 SDN, multitenant proxy plugin), Dec 2017.
// Files/functions: pkg/network/node/proxy.go (OsdnProxy.Start, OsdnProxy.syncEgressDNSProxyFirewall,
// OsdnProxy.updateEgressNetworkPolicy, OsdnProxy.OnEndpointsUpdate, OsdnProxy.endpointsBlocked),
// pkg/network/node/egress_dns.go (EgressDNS.Add, EgressDNS.Sync, the Updates channel).
// Issue/PR: openshift/origin#17584 "sdn: fix locking of egress DNS policy updates" (backport
// openshift/origin#17586), Bugzilla 1502602.
//
// EgressNetworkPolicy rules may name DNS hosts. EgressDNS re-resolves them and pushes the policy UID
// on its Updates channel; the proxy's syncEgressDNSProxyFirewall goroutine receives it in an endless
// for loop, looks the policy up, and re-applies it under proxy.lock. The lock was taken with
// "proxy.lock.Lock(); defer proxy.lock.Unlock()" inside the loop body: the deferred unlock only runs
// when the function returns, which it never does, so after the first DNS change the proxy lock stays
// held for good. Every endpoints event then blocks in OnEndpointsAdd/Update/Delete, which lock the
// same mutex, so started or stopped pods are no longer reflected in the iptables rules (and the next
// DNS update blocks the sync goroutine on its own lock). The fix scopes the lock to a function
// literal called once per update, as the EgressNetworkPolicy watch already did.
package main

import (
	"fmt"
	"sync"
	"time"
)

type EgressNetworkPolicy struct {
	UID, Namespace, Name string
	DenyDNSNames         []string
}

type Endpoints struct {
	UID, Namespace, Name string
	IPs                  []string
}

// EndpointsHandler is pconfig.EndpointsHandler, implemented by the iptables proxier.
type EndpointsHandler interface {
	OnEndpointsAdd(ep *Endpoints)
	OnEndpointsUpdate(old, ep *Endpoints)
	OnEndpointsDelete(ep *Endpoints)
}

type iptablesProxier struct{ synced map[string][]string }

func (p *iptablesProxier) OnEndpointsAdd(ep *Endpoints)         { p.synced[ep.Name] = ep.IPs }
func (p *iptablesProxier) OnEndpointsUpdate(old, ep *Endpoints) { p.synced[ep.Name] = ep.IPs }
func (p *iptablesProxier) OnEndpointsDelete(ep *Endpoints)      { delete(p.synced, ep.Name) }

type EgressDNSUpdate struct{ UID string }

type EgressDNS struct {
	lock    sync.Mutex
	ips     map[string][]string
	added   chan string
	Updates chan EgressDNSUpdate
	owners  map[string]string // dns name -> policy UID
}

func (e *EgressDNS) Add(policy EgressNetworkPolicy) {
	e.lock.Lock()
	defer e.lock.Unlock()
	for _, name := range policy.DenyDNSNames {
		e.owners[name] = policy.UID
		e.added <- name
	}
}

func (e *EgressDNS) GetIPs(name string) []string {
	e.lock.Lock()
	defer e.lock.Unlock()
	return e.ips[name]
}

// Sync re-resolves DNS names and reports the policies whose addresses changed.
func (e *EgressDNS) Sync() {
	for name := range e.added {
		e.lock.Lock()
		e.ips[name] = []string{"93.184.216.34"}
		uid := e.owners[name]
		e.lock.Unlock()
		e.Updates <- EgressDNSUpdate{UID: uid}
	}
}

type OsdnProxy struct {
	egressDNS            *EgressDNS
	baseEndpointsHandler EndpointsHandler
	policies             []EgressNetworkPolicy

	lock         sync.Mutex
	firewall     map[string][]string
	allEndpoints map[string]*Endpoints
	blocked      map[string]bool
}

func (proxy *OsdnProxy) Start(baseHandler EndpointsHandler) {
	proxy.baseEndpointsHandler = baseHandler
	proxy.lock.Lock()
	defer proxy.lock.Unlock()
	go proxy.egressDNS.Sync()
	go proxy.syncEgressDNSProxyFirewall()
	for _, policy := range proxy.policies {
		proxy.egressDNS.Add(policy)
		proxy.updateEgressNetworkPolicy(policy)
	}
}

func (proxy *OsdnProxy) updateEgressNetworkPolicy(policy EgressNetworkPolicy) {
	var firewall []string // denied /32s
	for _, name := range policy.DenyDNSNames {
		firewall = append(firewall, proxy.egressDNS.GetIPs(name)...)
	}
	proxy.firewall[policy.Namespace] = firewall
	// Update endpoints
	for _, ep := range proxy.allEndpoints {
		if ep.Namespace != policy.Namespace {
			continue
		}
		wasBlocked := proxy.blocked[ep.UID]
		proxy.blocked[ep.UID] = proxy.endpointsBlocked(ep)
		if wasBlocked && !proxy.blocked[ep.UID] {
			proxy.baseEndpointsHandler.OnEndpointsAdd(ep)
		} else if !wasBlocked && proxy.blocked[ep.UID] {
			proxy.baseEndpointsHandler.OnEndpointsDelete(ep)
		}
	}
}

func (proxy *OsdnProxy) endpointsBlocked(ep *Endpoints) bool {
	for _, ip := range ep.IPs {
		for _, denied := range proxy.firewall[ep.Namespace] {
			if denied == ip {
				return true
			}
		}
	}
	return false
}

func (proxy *OsdnProxy) OnEndpointsUpdate(old, ep *Endpoints) {
	proxy.lock.Lock()
	defer proxy.lock.Unlock()
	proxy.allEndpoints[ep.UID] = ep
	proxy.blocked[ep.UID] = proxy.endpointsBlocked(ep)
	if !proxy.blocked[ep.UID] {
		proxy.baseEndpointsHandler.OnEndpointsUpdate(old, ep)
	}
}

func (proxy *OsdnProxy) syncEgressDNSProxyFirewall() {
	for {
		policyUpdates := <-proxy.egressDNS.Updates
		policy, ok := getPolicy(policyUpdates.UID, proxy.policies)
		if !ok {
			continue
		}

		proxy.lock.Lock()
		defer proxy.lock.Unlock()

		proxy.updateEgressNetworkPolicy(policy)
	}
}

func getPolicy(policyUID string, policies []EgressNetworkPolicy) (EgressNetworkPolicy, bool) {
	for _, p := range policies {
		if p.UID == policyUID {
			return p, true
		}
	}
	return EgressNetworkPolicy{}, false
}

func main() {
	proxy := &OsdnProxy{
		egressDNS: &EgressDNS{ips: map[string][]string{}, added: make(chan string), Updates: make(chan EgressDNSUpdate),
			owners: map[string]string{}},
		policies:     []EgressNetworkPolicy{{UID: "enp-1", Namespace: "payments", Name: "default", DenyDNSNames: []string{"www.example.com"}}},
		firewall:     map[string][]string{},
		allEndpoints: map[string]*Endpoints{},
		blocked:      map[string]bool{},
	}
	base := &iptablesProxier{synced: map[string][]string{}}
	proxy.Start(base)

	time.Sleep(100 * time.Millisecond) // the DNS answer for www.example.com arrives
	old := &Endpoints{UID: "ep-1", Namespace: "payments", Name: "api", IPs: []string{"10.129.0.4"}}
	ep := &Endpoints{UID: "ep-1", Namespace: "payments", Name: "api", IPs: []string{"10.129.0.4", "10.130.0.9"}}
	proxy.OnEndpointsUpdate(old, ep) // endpoints informer: a new pod behind service "api"
	fmt.Println("iptables endpoints for api:", base.synced["api"])
}
