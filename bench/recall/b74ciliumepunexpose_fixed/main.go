// Project: cilium/cilium (pkg/endpointmanager/manager.go, pkg/endpoint/endpoint.go, pkg/endpoint/policy.go, daemon/cmd/policy.go), v1.13 development, October 2022.
// Bug: EndpointManager.unexpose holds mgr.mutex while releasing the endpoint ID and, when the release fails, builds the
// warning's log fields with ep.GetContainerID() and ep.GetK8sNamespaceAndPodName(), which read-lock the endpoint. A
// regenerating endpoint holds its own lock and waits for the policy repository lock, and policyAdd holds the repository
// lock while calling EndpointManager.GetPolicyEndpoints (mgr.mutex), closing a three-party cycle. Fixed by
// cilium/cilium#21771 ("EndpointManager: fix deadlock when releasing an endpoint"), which logs the identifiers that
// unexpose had already fetched instead of locking the endpoint again.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Prefixes of the endpoint identifiers (pkg/endpoint/id).
const (
	CiliumLocalIdPrefix = "cilium-local"
	ContainerIdPrefix   = "container-id"
	PodNamePrefix       = "pod"
)

// Repository is pkg/policy.Repository.
type Repository struct {
	Mutex    sync.RWMutex // lock.RWMutex
	revision uint64
	rules    []string
}

func (p *Repository) GetRevision() uint64 { return p.revision }

// Endpoint is pkg/endpoint.Endpoint.
type Endpoint struct {
	ID           uint16
	containerID  string
	K8sNamespace string
	K8sPodName   string

	mutex          sync.RWMutex // lock.RWMutex
	state          string
	policyRevision uint64
	policyGetter   func() *Repository
}

func (e *Endpoint) unconditionalRLock() { e.mutex.RLock() }
func (e *Endpoint) runlock()            { e.mutex.RUnlock() }

func (e *Endpoint) GetContainerID() string {
	e.unconditionalRLock()
	defer e.runlock()
	return e.containerID
}

func (e *Endpoint) GetK8sNamespaceAndPodName() string {
	e.unconditionalRLock()
	defer e.runlock()
	return e.K8sNamespace + "/" + e.K8sPodName
}

func (e *Endpoint) GetState() string {
	e.unconditionalRLock()
	defer e.runlock()
	return e.state
}

// Identifiers fetches the set of attributes that uniquely identify the endpoint.
func (e *Endpoint) Identifiers() (map[string]string, error) {
	e.unconditionalRLock()
	defer e.runlock()
	if e.state == "disconnecting" {
		return nil, errors.New("endpoint is disconnecting")
	}
	return map[string]string{CiliumLocalIdPrefix: fmt.Sprint(e.ID), ContainerIdPrefix: e.containerID,
		PodNamePrefix: e.K8sNamespace + "/" + e.K8sPodName}, nil
}

// regeneratePolicy must be called with the endpoint lock held.
func (e *Endpoint) regeneratePolicy() error {
	repo := e.policyGetter()
	repo.Mutex.RLock()
	defer repo.Mutex.RUnlock()
	e.policyRevision = repo.GetRevision()
	return nil
}

func (e *Endpoint) regenerate() error {
	e.mutex.Lock() // lockAlive
	defer e.mutex.Unlock()
	return e.regeneratePolicy()
}

// EndpointManager is pkg/endpointmanager.EndpointManager.
type EndpointManager struct {
	mutex         sync.RWMutex // lock.RWMutex
	endpoints     map[uint16]*Endpoint
	endpointsAux  map[string]*Endpoint
	epIDAllocated map[uint16]bool // the idpool behind epIDAllocator
	logs          []string
}

func (mgr *EndpointManager) releaseID(ep *Endpoint) error {
	time.Sleep(100 * time.Millisecond) // widen the window the test needs
	if !mgr.epIDAllocated[ep.ID] {
		return fmt.Errorf("endpoint ID %d is not allocated", ep.ID)
	}
	delete(mgr.epIDAllocated, ep.ID)
	return nil
}

// unexpose removes the endpoint from the endpointmanager, so subsequent lookups will no longer find it.
func (mgr *EndpointManager) unexpose(ep *Endpoint) {
	// Fetch the identifiers; this will only fail if the endpoint is already disconnected.
	identifiers, err := ep.Identifiers()
	if err != nil {
		return
	}
	previousState := ep.GetState()

	mgr.mutex.Lock()
	defer mgr.mutex.Unlock()
	// This must be done before the ID is released for the endpoint!
	delete(mgr.endpoints, ep.ID)
	// We haven't yet allocated the ID for a restoring endpoint, so no need to release it.
	if previousState != "restoring" {
		if err := mgr.releaseID(ep); err != nil {
			mgr.logs = append(mgr.logs, fmt.Sprintf("level=warning msg=%q error=%q %v", "Unable to release endpoint ID", err,
				map[string]any{
					"state":       previousState,
					"containerID": identifiers[ContainerIdPrefix],
					"k8sPodName":  identifiers[PodNamePrefix],
				}))
		}
	}
	for prefix, id := range identifiers {
		delete(mgr.endpointsAux, prefix+":"+id)
	}
}

// GetPolicyEndpoints returns a set of all endpoints that must be considered for policy updates.
func (mgr *EndpointManager) GetPolicyEndpoints() map[*Endpoint]struct{} {
	mgr.mutex.RLock()
	defer mgr.mutex.RUnlock()
	eps := make(map[*Endpoint]struct{}, len(mgr.endpoints))
	for _, ep := range mgr.endpoints {
		eps[ep] = struct{}{}
	}
	return eps
}

// Daemon is daemon/cmd.Daemon.
type Daemon struct {
	policy          *Repository
	endpointManager *EndpointManager
}

func (d *Daemon) policyAdd(rules []string) uint64 {
	d.policy.Mutex.Lock()
	defer d.policy.Mutex.Unlock()
	// Get all endpoints at the time rules were added so we can figure out which ones to regenerate.
	allEndpoints := d.endpointManager.GetPolicyEndpoints()
	d.policy.rules = append(d.policy.rules, rules...) // AddListLocked
	d.policy.revision++
	return uint64(len(allEndpoints))
}

func main() {
	repo := &Repository{}
	mgr := &EndpointManager{endpoints: map[uint16]*Endpoint{}, endpointsAux: map[string]*Endpoint{}, epIDAllocated: map[uint16]bool{}}
	d := &Daemon{policy: repo, endpointManager: mgr}
	getRepo := func() *Repository { return repo }

	// Endpoint 1234's ID was already given back by a racing delete (high pod churn).
	dying := &Endpoint{ID: 1234, containerID: "a1b2c3", K8sNamespace: "default", K8sPodName: "web-0", state: "ready", policyGetter: getRepo}
	mgr.endpoints[dying.ID] = dying

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // CNI DEL: the pod of endpoint 1234 is deleted
		defer wg.Done()
		mgr.unexpose(dying)
	}()
	go func() { // a CiliumNetworkPolicy is imported
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		d.policyAdd([]string{"allow-from-frontend"})
	}()
	go func() { // endpoint 1234 is still being regenerated
		defer wg.Done()
		time.Sleep(60 * time.Millisecond)
		_ = dying.regenerate()
	}()
	wg.Wait()
	fmt.Println(mgr.logs)
	fmt.Println("endpoints left:", len(mgr.endpoints), "policy revision:", repo.GetRevision())
}
