// Shape of cilium/cilium#20915, fixed in cilium/cilium#24672 ("Three fixes
// for deadlocks"): Endpoint.syncEndpointHeaderFile holds the endpoint lock
// while writing the header file, which asks the regeneration Owner for the
// DNS rules; Daemon.GetDNSRules read-locks the IPCache. Meanwhile the k8s
// watcher injects kube-apiserver labels under the IPCache write lock and
// IPCache.UpdatePolicyMaps locks every endpoint.
package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

const writeLatency = 100 * time.Millisecond

// Owner is the endpoint's view of the daemon (pkg/endpoint/regeneration).
type Owner interface {
	GetDNSRules(epID uint16) []string
}

type Endpoint struct {
	buildMutex   sync.Mutex
	mutex        sync.RWMutex
	ID           uint16
	owner        Owner
	disconnected bool
	header       string
	policyRev    int
}

var errEndpointGone = errors.New("endpoint is disconnected")

func (e *Endpoint) lockAlive() error {
	e.mutex.Lock()
	if e.disconnected {
		e.mutex.Unlock()
		return errEndpointGone
	}
	return nil
}

func (e *Endpoint) unlock() { e.mutex.Unlock() }

func (e *Endpoint) writeHeaderfile(prefix string, rules []string) {
	time.Sleep(writeLatency) // render the C header to disk
	e.header = fmt.Sprintf("%s/ep_config.h dns=%s", prefix, strings.Join(rules, ","))
}

func (e *Endpoint) syncEndpointHeaderFile(reasons []string) {
	e.buildMutex.Lock()
	defer e.buildMutex.Unlock()
	// Fix (#24672): GetDNSRules read-locks the IPCache, whose critical
	// sections lock endpoints, so fetch the rules before the endpoint lock.
	rules := e.owner.GetDNSRules(e.ID)
	if err := e.lockAlive(); err != nil {
		return
	}
	defer e.unlock()
	e.writeHeaderfile("/var/run/cilium/state/"+fmt.Sprint(e.ID), rules)
}

func (e *Endpoint) ApplyPolicyMapChanges() error {
	if err := e.lockAlive(); err != nil {
		return err
	}
	defer e.unlock()
	e.policyRev++
	return nil
}

type EndpointManager struct {
	mutex     sync.RWMutex
	endpoints map[uint16]*Endpoint
}

func (mgr *EndpointManager) UpdatePolicyMaps() {
	mgr.mutex.RLock()
	eps := make([]*Endpoint, 0, len(mgr.endpoints))
	for _, ep := range mgr.endpoints {
		eps = append(eps, ep)
	}
	mgr.mutex.RUnlock()
	for _, ep := range eps {
		_ = ep.ApplyPolicyMapChanges()
	}
}

type IPCache struct {
	mutex    sync.RWMutex
	byIP     map[string]uint32
	metadata map[string]string
	epMgr    *EndpointManager
}

func (ipc *IPCache) UpsertMetadata(prefix, label string) {
	ipc.mutex.Lock()
	defer ipc.mutex.Unlock()
	ipc.metadata[prefix] = label
}

func (ipc *IPCache) InjectLabels() {
	ipc.mutex.Lock()
	defer ipc.mutex.Unlock()
	for prefix := range ipc.metadata {
		ipc.byIP[prefix] = 7 // reserved:kube-apiserver
	}
	time.Sleep(writeLatency) // identity allocation for the new label set
	ipc.epMgr.UpdatePolicyMaps()
}

func (ipc *IPCache) LookupByIdentity(id uint32) []string {
	ipc.mutex.RLock()
	defer ipc.mutex.RUnlock()
	var ips []string
	for ip, i := range ipc.byIP {
		if i == id {
			ips = append(ips, ip)
		}
	}
	sort.Strings(ips)
	return ips
}

type Daemon struct {
	ipcache  *IPCache
	dnsRules map[uint16][]uint32 // endpoint -> selected identities
}

func (d *Daemon) GetDNSRules(epID uint16) []string {
	var out []string
	for _, id := range d.dnsRules[epID] {
		out = append(out, d.ipcache.LookupByIdentity(id)...)
	}
	return out
}

func main() {
	mgr := &EndpointManager{endpoints: map[uint16]*Endpoint{}}
	ipc := &IPCache{byIP: map[string]uint32{"10.96.0.10": 102}, metadata: map[string]string{}, epMgr: mgr}
	d := &Daemon{ipcache: ipc, dnsRules: map[uint16][]uint32{512: {102}}}
	ep := &Endpoint{ID: 512, owner: d}
	mgr.endpoints[ep.ID] = ep

	done := make(chan struct{})
	go func() { // proxy port changed: rewrite the endpoint header file
		ep.syncEndpointHeaderFile([]string{"proxy port allocated"})
		close(done)
	}()

	time.Sleep(20 * time.Millisecond)
	// k8s watcher: the kubernetes service's endpoints changed.
	ipc.UpsertMetadata("172.18.0.2/32", "reserved:kube-apiserver")
	ipc.InjectLabels()
	<-done
	fmt.Println(ep.header, "rev", ep.policyRev)
}
