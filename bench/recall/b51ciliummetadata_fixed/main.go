// Project: Cilium (cilium/cilium), v1.12 branch (unreleased 1.12.x, July/August 2023).
// Files/functions: pkg/ipcache/ipcache.go (IPCache.Delete, IPCache.deleteLocked,
// IPCache.LookupByIP), pkg/ipcache/metadata.go (metadata, IPCache.InjectLabels,
// metadata.remove), called from the node manager on node deletion and from the
// label-injector controller.
// Issue: cilium/cilium#27382 "Deadlock in 1.12 ipcache metadata", a regression
// from the backport PR #26958 "[v1.12] Delete IP Label metadata on delete from
// ipcache"; fixed by PR #27406.
//
// The ipcache metadata layer documents its lock order: if the metadata mutex
// and the IPCache mutex are both needed, the metadata mutex is taken first.
// The label injector follows it: InjectLabels read-locks the metadata and, for
// each modified prefix, looks up the current identity with LookupByIP, which
// read-locks the IPCache mutex, and resolves a new identity (an allocation
// that can take a while). PR #26958 made IPCache.Delete drop the prefix's
// metadata too, but it does so from deleteLocked, i.e. with the IPCache mutex
// already write-locked, and metadata.remove write-locks the metadata mutex.
// When a node is deleted (EKS node recycling) while the injector is working
// through the kube-apiserver prefixes, Delete holds the IPCache mutex and
// waits for the metadata lock, and the injector holds the metadata read lock
// and waits for the IPCache mutex. The twin removes the metadata entry before
// the IPCache mutex is taken, which restores the documented order.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type NumericIdentity uint32

type Identity struct {
	ID     NumericIdentity
	Source string
}

type Labels map[string]string

type prefixInfo map[string]Labels // resource -> labels

// metadata contains the ipcache metadata.
type metadata struct {
	// Protects the m map.
	//
	// If this mutex will be held at the same time as the IPCache mutex,
	// this mutex must be taken first and then take the IPCache mutex in
	// order to prevent deadlocks.
	sync.RWMutex
	m map[string]prefixInfo
}

func (m *metadata) getLocked(prefix string) prefixInfo { return m.m[prefix] }

func (m *metadata) upsert(prefix, resource string, lbls Labels) {
	m.Lock()
	defer m.Unlock()
	if m.m[prefix] == nil {
		m.m[prefix] = prefixInfo{}
	}
	m.m[prefix][resource] = lbls
}

func (m *metadata) remove(prefix string) {
	m.Lock()
	defer m.Unlock()
	delete(m.m, prefix)
}

type IdentityAllocator interface {
	AllocateIdentity(ctx context.Context, lbls Labels, oldNID NumericIdentity) (NumericIdentity, bool, error)
}

// crdAllocator stands in for the CachingIdentityAllocator: allocating a
// global identity goes through the kvstore / CRD backend.
type crdAllocator struct {
	mu   sync.Mutex
	next NumericIdentity
}

func (a *crdAllocator) AllocateIdentity(ctx context.Context, lbls Labels, oldNID NumericIdentity) (NumericIdentity, bool, error) {
	time.Sleep(50 * time.Millisecond)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	return 16777216 + a.next, true, nil
}

type IPCache struct {
	mutex             sync.RWMutex
	ipToIdentityCache map[string]Identity
	metadata          *metadata
	IdentityAllocator IdentityAllocator
}

func (ipc *IPCache) LookupByIP(IP string) (Identity, bool) {
	ipc.mutex.RLock()
	defer ipc.mutex.RUnlock()
	id, ok := ipc.ipToIdentityCache[IP]
	return id, ok
}

func (ipc *IPCache) upsertLocked(IP string, id Identity) { ipc.ipToIdentityCache[IP] = id }

// InjectLabels is run by the label-injector controller for the prefixes whose
// metadata changed.
func (ipc *IPCache) InjectLabels(ctx context.Context, modifiedPrefixes []string) ([]string, error) {
	entriesToReplace := make(map[string]Identity)

	ipc.metadata.RLock()
	for _, prefix := range modifiedPrefixes {
		oldID, _ := ipc.LookupByIP(prefix)
		info := ipc.metadata.getLocked(prefix)
		if info == nil {
			continue
		}
		lbls := Labels{}
		for _, l := range info {
			for k, v := range l {
				lbls[k] = v
			}
		}
		newID, _, err := ipc.IdentityAllocator.AllocateIdentity(ctx, lbls, oldID.ID)
		if err != nil {
			ipc.metadata.RUnlock()
			return modifiedPrefixes, err
		}
		entriesToReplace[prefix] = Identity{ID: newID, Source: "kube-apiserver"}
	}
	ipc.metadata.RUnlock()

	ipc.mutex.Lock()
	defer ipc.mutex.Unlock()
	for p, id := range entriesToReplace {
		ipc.upsertLocked(p, id)
	}
	return nil, nil
}

// Delete removes the provided IP-to-security-identity mapping from the IPCache.
func (ipc *IPCache) Delete(IP string, source string) bool {
	// Delete the IP's label metadata too, so that a recycled IP does not
	// inherit the old labels. The metadata lock is taken before, never
	// under, the IPCache mutex.
	ipc.metadata.remove(IP)

	ipc.mutex.Lock()
	defer ipc.mutex.Unlock()
	return ipc.deleteLocked(IP, source)
}

func (ipc *IPCache) deleteLocked(IP string, source string) bool {
	if _, found := ipc.ipToIdentityCache[IP]; !found {
		return false
	}
	delete(ipc.ipToIdentityCache, IP)
	return true
}

// nodeManager stands in for pkg/node/manager.
type nodeManager struct{ ipcache *IPCache }

func (m *nodeManager) NodeDeleted(nodeIP string) {
	m.ipcache.Delete(nodeIP+"/32", "custom-resource")
}

func main() {
	ipc := &IPCache{
		ipToIdentityCache: map[string]Identity{"10.0.0.10/32": {ID: 7, Source: "custom-resource"}},
		metadata:          &metadata{m: map[string]prefixInfo{}},
		IdentityAllocator: &crdAllocator{},
	}
	apiserver := Labels{"reserved:kube-apiserver": ""}
	ipc.metadata.upsert("10.0.0.10/32", "kubernetes-endpoints", apiserver)
	ipc.metadata.upsert("10.0.0.11/32", "kubernetes-endpoints", apiserver)

	injected := make(chan error)
	go func() {
		_, err := ipc.InjectLabels(context.Background(), []string{"10.0.0.11/32", "10.0.0.10/32"})
		injected <- err
	}()

	time.Sleep(10 * time.Millisecond)
	(&nodeManager{ipcache: ipc}).NodeDeleted("10.0.0.10")
	fmt.Println("labels injected:", <-injected)
}
