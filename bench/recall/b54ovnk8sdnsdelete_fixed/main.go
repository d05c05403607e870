// Project: ovn-org/ovn-kubernetes (go-controller), 2024; OpenShift 4.14-4.16 (OCPBUGS-34402/34404/34405).
// Files/functions: go-controller/pkg/ovn/dnsnameresolver/egressdns.go (EgressDNS.Delete, Add, addToDNS,
// updateEntryForName), go-controller/pkg/ovn/egressfirewall.go (addEgressFirewall, deleteEgressFirewall,
// updateEgressFirewallForNode; the controller reaches EgressDNS through the DNSNameResolver interface).
// Issue/PR: ovn-org/ovn-kubernetes#4386 "dns: fix deadlock in case of error" (downstream
// openshift/ovn-kubernetes#2179 "Release egressFirewall lock"; follow-up redesign #4388).
//
// EgressDNS.Delete takes e.lock by hand (no defer) and walks the DNS entries of the namespace whose
// EgressFirewall is removed, destroying the OVN address set of entries no longer referenced. If
// AddressSet.Destroy fails (an NB transaction error) Delete returns without unlocking e.lock. The
// next EgressFirewall that uses a dnsName then blocks in EgressDNS.Add while holding its
// egressFirewall lock, and the node handler, which walks all egress firewalls for nodeSelector rules
// (sharing the node informer queue with the regular node handler), blocks on that lock, so no node
// events are handled any more. The fix unlocks e.lock on the error path before returning.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type AddressSet interface {
	SetAddresses(addrs []string) error
	Destroy() error
}

type AddressSetFactory interface {
	NewAddressSet(name string, ips []string) (AddressSet, error)
}

// DNSNameResolver is what the egress firewall controller sees of EgressDNS.
type DNSNameResolver interface {
	Add(namespace, dnsName string) (AddressSet, error)
	Delete(namespace string) error
}

type dnsEntry struct {
	namespaces    map[string]struct{}
	dnsAddressSet AddressSet
}

type EgressDNS struct {
	lock              sync.Mutex
	dnsEntries        map[string]*dnsEntry
	addressSetFactory AddressSetFactory
	deleted           chan string
}

func (e *EgressDNS) Add(namespace, dnsName string) (AddressSet, error) {
	e.lock.Lock()
	defer e.lock.Unlock()
	if _, exists := e.dnsEntries[dnsName]; !exists {
		entry := dnsEntry{namespaces: make(map[string]struct{})}
		var err error
		entry.dnsAddressSet, err = e.addressSetFactory.NewAddressSet(dnsName, nil)
		if err != nil {
			return nil, fmt.Errorf("cannot create addressSet for %s: %v", dnsName, err)
		}
		e.dnsEntries[dnsName] = &entry
		go e.addToDNS(dnsName)
	}
	e.dnsEntries[dnsName].namespaces[namespace] = struct{}{}
	return e.dnsEntries[dnsName].dnsAddressSet, nil
}

func (e *EgressDNS) Delete(namespace string) error {
	e.lock.Lock()
	var dnsNamesToDelete []string
	// go through all dnsNames for namespaces
	for dnsName, entry := range e.dnsEntries {
		delete(entry.namespaces, namespace)
		if len(entry.namespaces) == 0 {
			// the dnsEntry appears in no other namespace, so delete the address_set
			err := entry.dnsAddressSet.Destroy()
			if err != nil {
				e.lock.Unlock()
				return fmt.Errorf("error deleting EgressFirewall AddressSet for dnsName: %s %v", dnsName, err)
			}
			delete(e.dnsEntries, dnsName)
			dnsNamesToDelete = append(dnsNamesToDelete, dnsName)
		}
	}
	e.lock.Unlock()
	for _, name := range dnsNamesToDelete {
		e.deleted <- name
	}
	return nil
}

func (e *EgressDNS) updateEntryForName(dnsName string) error {
	e.lock.Lock()
	defer e.lock.Unlock()
	if _, ok := e.dnsEntries[dnsName]; !ok {
		return fmt.Errorf("cannot update DNS record for %s: no entry found", dnsName)
	}
	return e.dnsEntries[dnsName].dnsAddressSet.SetAddresses([]string{"93.184.216.34"})
}

// addToDNS resolves a new name and updates its address set (then signals Run; omitted).
func (e *EgressDNS) addToDNS(dnsName string) {
	_ = e.updateEntryForName(dnsName)
}

type nbClient struct{ connected bool }

// nbAddressSet is an address set in the OVN northbound database.
type nbAddressSet struct {
	name string
	nb   *nbClient
}

func (as *nbAddressSet) SetAddresses(addrs []string) error { return nil }
func (as *nbAddressSet) Destroy() error {
	if !as.nb.connected {
		return errors.New("transaction failed: not connected to OVN NB database")
	}
	return nil
}

type nbAddressSetFactory struct{ nb *nbClient }

func (f *nbAddressSetFactory) NewAddressSet(name string, ips []string) (AddressSet, error) {
	return &nbAddressSet{name: name, nb: f.nb}, nil
}

type egressFirewallRule struct{ dnsName, nodeSelector string }

type egressFirewall struct {
	sync.Mutex
	namespace   string
	egressRules []*egressFirewallRule
}

type DefaultNetworkController struct {
	dnsNameResolver DNSNameResolver
	egressFirewalls sync.Map // namespace -> *egressFirewall
}

func (oc *DefaultNetworkController) addEgressFirewall(namespace string, rules []*egressFirewallRule) error {
	ef := &egressFirewall{namespace: namespace, egressRules: rules}
	ef.Lock()
	defer ef.Unlock()
	oc.egressFirewalls.Store(namespace, ef)
	for _, rule := range ef.egressRules {
		if rule.dnsName != "" {
			if _, err := oc.dnsNameResolver.Add(namespace, rule.dnsName); err != nil {
				return err
			}
		}
	}
	return nil
}

func (oc *DefaultNetworkController) deleteEgressFirewall(namespace string) error {
	oc.egressFirewalls.Delete(namespace)
	return oc.dnsNameResolver.Delete(namespace)
}

// updateEgressFirewallForNode runs from the node handler for every node add/update.
func (oc *DefaultNetworkController) updateEgressFirewallForNode(node string) {
	oc.egressFirewalls.Range(func(k, v interface{}) bool {
		ef := v.(*egressFirewall)
		ef.Lock()
		defer ef.Unlock()
		_ = ef.egressRules // match nodeSelector rules against the node's labels, update ACLs
		return true
	})
}

func main() {
	nb := &nbClient{connected: true}
	edns := &EgressDNS{dnsEntries: map[string]*dnsEntry{}, addressSetFactory: &nbAddressSetFactory{nb: nb},
		deleted: make(chan string, 1)}
	oc := &DefaultNetworkController{dnsNameResolver: edns}

	_ = oc.addEgressFirewall("team-a", []*egressFirewallRule{{dnsName: "www.example.com"}})
	time.Sleep(50 * time.Millisecond) // first resolution done
	nb.connected = false              // NB leader election in progress
	if err := oc.deleteEgressFirewall("team-a"); err != nil {
		fmt.Println("delete egress firewall:", err)
	}
	nb.connected = true

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // egress firewall handler
		defer wg.Done()
		rules := []*egressFirewallRule{{nodeSelector: "infra=true"}, {dnsName: "api.example.org"}}
		_ = oc.addEgressFirewall("team-b", rules)
	}()
	go func() { // node handler
		defer wg.Done()
		time.Sleep(50 * time.Millisecond)
		oc.updateEgressFirewallForNode("worker-3")
	}()
	wg.Wait()
	fmt.Println("egress firewall and node events handled")
}
