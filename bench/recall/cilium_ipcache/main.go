// Project: cilium (pkg/ipcache/ipcache.go, pkg/datapath/ipcache/listener.go)
// Bug: IPCache.DumpToListener holds ipc.mutex.RLock while replaying every entry into a
// listener. The BPF listener's OnIPIdentityCacheChange calls back into ipc.LookupByIP, which
// takes RLock again. If an Upsert (Lock) arrives between the two RLocks, the writer waits for
// the first reader and the second RLock waits behind the writer: recursive-RLock deadlock.
// Upstream fix: listeners called under the lock use the *RLocked lookup variants (LookupByIPRLocked); modelled, PR number not recalled.
package main

import (
	"fmt"
	"net/netip"
	"sync"
	"time"
)

type CacheModification int

const (
	Upsert CacheModification = iota
	Delete
)

type Identity struct {
	ID     uint32
	Source string
}

type IPIdentityMappingListener interface {
	OnIPIdentityCacheChange(modType CacheModification, cidr netip.Prefix, oldHostIP, newHostIP netip.Addr, newID Identity, encryptKey uint8)
}

type IPCache struct {
	mutex             sync.RWMutex
	ipToIdentityCache map[string]Identity
	ipToHostIPCache   map[string]netip.Addr
	listeners         []IPIdentityMappingListener
}

func NewIPCache() *IPCache {
	return &IPCache{
		ipToIdentityCache: make(map[string]Identity),
		ipToHostIPCache:   make(map[string]netip.Addr),
	}
}

func (ipc *IPCache) AddListener(l IPIdentityMappingListener) {
	ipc.mutex.Lock()
	ipc.listeners = append(ipc.listeners, l)
	ipc.mutex.Unlock()
	ipc.DumpToListener(l)
}

func (ipc *IPCache) Upsert(ip string, hostIP netip.Addr, id Identity) {
	ipc.mutex.Lock()
	defer ipc.mutex.Unlock()
	ipc.ipToIdentityCache[ip] = id
	ipc.ipToHostIPCache[ip] = hostIP
}

// LookupByIP takes the read lock.
func (ipc *IPCache) LookupByIP(ip string) (Identity, bool) {
	ipc.mutex.RLock()
	defer ipc.mutex.RUnlock()
	return ipc.LookupByIPRLocked(ip)
}

// LookupByIPRLocked requires the caller to hold the read lock.
func (ipc *IPCache) LookupByIPRLocked(ip string) (Identity, bool) {
	id, ok := ipc.ipToIdentityCache[ip]
	return id, ok
}

func (ipc *IPCache) DumpToListener(listener IPIdentityMappingListener) {
	ipc.mutex.RLock()
	defer ipc.mutex.RUnlock()
	for ip, id := range ipc.ipToIdentityCache {
		prefix, err := netip.ParsePrefix(ip)
		if err != nil {
			continue
		}
		listener.OnIPIdentityCacheChange(Upsert, prefix, netip.Addr{}, ipc.ipToHostIPCache[ip], id, 0)
	}
}

// BPFListener syncs the ipcache into the cilium_ipcache BPF map.
type BPFListener struct {
	bpfMap  map[netip.Prefix]uint32
	ipcache *IPCache
}

func newListener(ipc *IPCache) *BPFListener {
	return &BPFListener{bpfMap: make(map[netip.Prefix]uint32), ipcache: ipc}
}

func (l *BPFListener) OnIPIdentityCacheChange(modType CacheModification, cidr netip.Prefix, oldHostIP, newHostIP netip.Addr, newID Identity, encryptKey uint8) {
	if modType == Delete {
		delete(l.bpfMap, cidr)
		return
	}
	// Slow path: map update syscall.
	time.Sleep(20 * time.Millisecond)
	if !newHostIP.IsValid() {
		// Tunnel endpoint unknown; resolve through the host's own entry.
		if hostID, ok := l.ipcache.LookupByIP(cidr.Masked().String()); ok && hostID.ID == 1 {
			newID.Source = "local"
		}
	}
	l.bpfMap[cidr] = newID.ID
}

func main() {
	ipc := NewIPCache()
	ipc.Upsert("10.0.0.1/32", netip.Addr{}, Identity{ID: 1, Source: "kvstore"})
	ipc.Upsert("10.0.1.0/24", netip.MustParseAddr("192.168.1.2"), Identity{ID: 4242, Source: "k8s"})

	done := make(chan struct{})
	go func() {
		// daemon init: BPF listener registration replays the whole cache
		ipc.AddListener(newListener(ipc))
		close(done)
	}()

	go func() {
		// k8s CiliumEndpoint watcher upserting concurrently
		time.Sleep(5 * time.Millisecond)
		ipc.Upsert("10.0.2.7/32", netip.MustParseAddr("192.168.1.3"), Identity{ID: 5001, Source: "k8s"})
	}()

	<-done
	fmt.Println("ipcache synced")
}
