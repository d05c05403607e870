// Fixed version (PR #24343 applied).
// Project: cilium/cilium, cilium-operator, CiliumEndpointSlice controller
// (main branch, March 2023, v1.14 development).
// Files/functions: operator/pkg/ciliumendpointslice/manager.go
// (cesManagerIdentity.InsertCEPInCache, cesManagerIdentity.updateCESInCache,
// cesMgr.addCEPtoCES, createCES), ceptocesmap.go (CESToCEPMapping).
// Issue/PR: cilium/cilium#24206 "CI: Potential deadlock in
// operator/pkg/ciliumendpointslice", fixed by PR #24343 "Fix operator deadlock
// introduced in the #23605".
//
// The identity batching manager keeps two levels of locks: its own
// identityLock over the identity<->CES maps, and a backendMutex inside every
// cesTracker. PR #23605 made them nest in both directions. InsertCEPInCache,
// run for a CiliumEndpoint event, looks for a CES with room for the CEP's
// identity inside a closure: it read-locks identityLock and then read-locks
// each candidate tracker's backendMutex. updateCESInCache, run when the
// controller syncs CES objects from the API server (deep copy at warm boot),
// takes the tracker's backendMutex first and then write-locks identityLock to
// record the identity of the copied endpoints. A CEP insert racing with the
// sync blocks each goroutine on the lock the other holds, and the operator's
// deadlock detector fires. The fix takes identityLock before backendMutex in
// updateCESInCache too ("First identityLock and then backendMutex").
package main

import (
	"fmt"
	"sync"
	"time"
)

type CoreCiliumEndpoint struct {
	Name       string
	IdentityID int64
}

type CiliumEndpointSlice struct {
	Name      string
	Namespace string
	Endpoints []CoreCiliumEndpoint
}

// cesTracker holds the desired state of a CiliumEndpointSlice.
type cesTracker struct {
	backendMutex sync.RWMutex
	ces          *CiliumEndpointSlice
	removedCEPs  map[string]struct{}
	cepInserted  int64
}

// CESToCEPMapping maps CES names to trackers and CEP names to CES names.
type CESToCEPMapping struct {
	mutex               sync.RWMutex
	cepNameToCESName    map[string]string
	cesNameToCESTracker map[string]*cesTracker
}

func (c *CESToCEPMapping) getCESTracker(name string) (*cesTracker, bool) {
	c.mutex.RLock()
	defer c.mutex.RUnlock()
	t, ok := c.cesNameToCESTracker[name]
	return t, ok
}

func (c *CESToCEPMapping) insertCES(name string, t *cesTracker) {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	c.cesNameToCESTracker[name] = t
}

func (c *CESToCEPMapping) insertCEP(cepName, cesName string) {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	c.cepNameToCESName[cepName] = cesName
}

type operations interface {
	InsertCEPInCache(cep *CoreCiliumEndpoint, ns string) string
	updateCESInCache(ces *CiliumEndpointSlice, isDeepCopy bool)
}

type cesMgr struct {
	desiredCESs  *CESToCEPMapping
	maxCEPsInCES int
}

type cesManagerIdentity struct {
	cesMgr
	identityLock  sync.RWMutex
	identityToCES map[int64][]*cesTracker
	cesToIdentity map[string]int64
}

func (c *cesMgr) createCES(name string) *cesTracker {
	ces := &cesTracker{ces: &CiliumEndpointSlice{Name: name}, removedCEPs: map[string]struct{}{}}
	c.desiredCESs.insertCES(name, ces)
	return ces
}

func (c *cesMgr) addCEPtoCES(cep *CoreCiliumEndpoint, ces *cesTracker) {
	ces.backendMutex.Lock()
	defer ces.backendMutex.Unlock()
	ces.ces.Endpoints = append(ces.ces.Endpoints, *cep)
	ces.cepInserted++
}

func (c *cesManagerIdentity) InsertCEPInCache(cep *CoreCiliumEndpoint, ns string) string {
	cb, cesName := func() (*cesTracker, string) {
		c.identityLock.RLock()
		// get first available CES
		if cess, exist := c.identityToCES[cep.IdentityID]; exist {
			for _, ces := range cess {
				ces.backendMutex.RLock()
				if len(ces.ces.Endpoints) >= c.maxCEPsInCES || len(ces.ces.Endpoints) == 0 {
					ces.backendMutex.RUnlock()
					continue
				}
				defer ces.backendMutex.RUnlock()
				defer c.identityLock.RUnlock()
				return ces, ces.ces.Name
			}
		}
		c.identityLock.RUnlock()

		// allocate a new cesTracker and return
		ces := c.createCES(fmt.Sprintf("ces-%d", len(c.cesToIdentity)+1))
		ces.ces.Namespace = ns
		c.identityLock.Lock()
		c.identityToCES[cep.IdentityID] = append(c.identityToCES[cep.IdentityID], ces)
		c.cesToIdentity[ces.ces.Name] = cep.IdentityID
		c.identityLock.Unlock()
		return ces, ces.ces.Name
	}()

	c.desiredCESs.insertCEP(ns+"/"+cep.Name, cesName)
	c.addCEPtoCES(cep, cb)
	return cesName
}

func (c *cesManagerIdentity) updateCESInCache(srcCES *CiliumEndpointSlice, isDeepCopy bool) {
	if ces, ok := c.desiredCESs.getCESTracker(srcCES.Name); ok {
		// The identityLock and backendMutex locks always need to be acquired in the
		// same order to avoid deadlocks. First identityLock and then backendMutex.
		c.identityLock.Lock()
		defer c.identityLock.Unlock()
		ces.backendMutex.Lock()
		defer ces.backendMutex.Unlock()
		if !isDeepCopy {
			ces.ces.Namespace = srcCES.Namespace
			return
		}
		ces.ces = srcCES
		time.Sleep(50 * time.Millisecond) // copying a large slice of endpoints
		_, exist := c.cesToIdentity[srcCES.Name]
		for _, cep := range ces.ces.Endpoints {
			// Update the identityToCES and cesToIdentity maps respectively.
			if !exist {
				c.identityToCES[cep.IdentityID] = append(c.identityToCES[cep.IdentityID], ces)
				c.cesToIdentity[srcCES.Name] = cep.IdentityID
				exist = true
			}
		}
	}
}

// syncCESsInLocalCache copies the CES objects listed from the API server.
func syncCESsInLocalCache(mgr operations, cess []*CiliumEndpointSlice) {
	for _, ces := range cess {
		mgr.updateCESInCache(ces, true)
	}
}

func main() {
	mgr := &cesManagerIdentity{
		cesMgr:        cesMgr{desiredCESs: &CESToCEPMapping{cepNameToCESName: map[string]string{}, cesNameToCESTracker: map[string]*cesTracker{}}, maxCEPsInCES: 100},
		identityToCES: map[int64][]*cesTracker{},
		cesToIdentity: map[string]int64{},
	}
	var ops operations = mgr
	ops.InsertCEPInCache(&CoreCiliumEndpoint{Name: "web-1", IdentityID: 4242}, "default")

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the CES controller resyncing from the API server
		defer wg.Done()
		syncCESsInLocalCache(ops, []*CiliumEndpointSlice{{Name: "ces-1", Namespace: "default",
			Endpoints: []CoreCiliumEndpoint{{Name: "web-1", IdentityID: 4242}}}})
	}()
	time.Sleep(10 * time.Millisecond)
	go func() { // a CiliumEndpoint event
		defer wg.Done()
		fmt.Println("web-2 batched in", ops.InsertCEPInCache(&CoreCiliumEndpoint{Name: "web-2", IdentityID: 4242}, "default"))
	}()
	wg.Wait()
}
