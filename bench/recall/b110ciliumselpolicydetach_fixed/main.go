// Project: cilium/cilium (pkg/policy/l4.go L4Policy.detach and removeUser, pkg/policy/resolve.go selectorPolicy, pkg/policy/distillery.go cachedSelectorPolicy.setPolicy, pkg/endpoint/policy.go RegenerateIfAlive, pkg/endpoint/endpoint.go leaveLocked), v1.17.1, March 2025.
// Bug: when an endpoint regeneration replaces the cached selectorPolicy of an identity, L4Policy.detach holds l4.mutex while it calls RegenerateIfAlive on every other endpoint using the old policy, which takes that endpoint's lock; an endpoint being deleted holds its own lock in leaveLocked and detaches its EndpointPolicy through selectorPolicy.removeUser, which takes l4.mutex, so the two deadlock AB-BA (issue #38056, fixed by PR #38139 "policy: Fix Endpoint Selector Policy Deadlock", which calls RegenerateIfAlive in a new goroutine).
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type ExternalRegenerationMetadata struct {
	Reason            string
	RegenerationLevel int
}

const RegenerateWithoutDatapath = 1

// PolicyOwner is implemented by *Endpoint.
type PolicyOwner interface {
	GetID() uint64
	RegenerateIfAlive(regenMetadata *ExternalRegenerationMetadata) <-chan bool
}

// EndpointPolicy is the per-endpoint view of a selectorPolicy.
type EndpointPolicy struct {
	SelectorPolicy *selectorPolicy
	PolicyOwner    PolicyOwner
}

// Detach removes EndpointPolicy references from selectorPolicy.
// PolicyOwner (aka Endpoint) is also locked during this call.
func (p *EndpointPolicy) Detach() {
	p.SelectorPolicy.removeUser(p)
}

type L4Policy struct {
	mutex sync.RWMutex
	users map[*EndpointPolicy]struct{}
}

func (l4 *L4Policy) insertUser(user *EndpointPolicy) {
	l4.mutex.Lock()
	if l4.users != nil {
		l4.users[user] = struct{}{}
	}
	l4.mutex.Unlock()
}

func (l4 *L4Policy) removeUser(user *EndpointPolicy) {
	l4.mutex.Lock()
	if l4.users != nil {
		delete(l4.users, user)
	}
	l4.mutex.Unlock()
}

// detach makes the L4Policy ready for garbage collection. If this is not a
// delete, the other users of the policy are told to regenerate.
func (l4 *L4Policy) detach(isDelete bool, endpointID uint64) {
	l4.mutex.Lock()
	defer l4.mutex.Unlock()
	if !isDelete {
		for ePolicy := range l4.users {
			if endpointID != ePolicy.PolicyOwner.GetID() {
				go ePolicy.PolicyOwner.RegenerateIfAlive(&ExternalRegenerationMetadata{
					Reason:            "selector policy has changed because of another endpoint with the same identity",
					RegenerationLevel: RegenerateWithoutDatapath,
				})
			}
		}
	}
	l4.users = nil
}

type selectorPolicy struct {
	Revision uint64
	L4Policy L4Policy
}

func (p *selectorPolicy) insertUser(user *EndpointPolicy) { p.L4Policy.insertUser(user) }
func (p *selectorPolicy) removeUser(user *EndpointPolicy) { p.L4Policy.removeUser(user) }
func (p *selectorPolicy) detach(isDelete bool, endpointID uint64) {
	p.L4Policy.detach(isDelete, endpointID)
}

type cachedSelectorPolicy struct {
	sync.Mutex
	identity uint32
	policy   atomic.Pointer[selectorPolicy]
}

func (cip *cachedSelectorPolicy) setPolicy(policy *selectorPolicy, endpointID uint64) {
	oldPolicy := cip.policy.Swap(policy)
	if oldPolicy != nil {
		oldPolicy.detach(false, endpointID)
	}
}

type policyCache struct {
	sync.Mutex
	revision uint64
	policies map[uint32]*cachedSelectorPolicy
}

func (cache *policyCache) updateSelectorPolicy(identity uint32, endpointID uint64) *selectorPolicy {
	cache.Lock()
	cip, ok := cache.policies[identity]
	if !ok {
		cip = &cachedSelectorPolicy{identity: identity}
		cache.policies[identity] = cip
	}
	cache.revision++
	rev := cache.revision
	cache.Unlock()

	cip.Lock()
	defer cip.Unlock()
	selPolicy := &selectorPolicy{Revision: rev, L4Policy: L4Policy{users: map[*EndpointPolicy]struct{}{}}}
	cip.setPolicy(selPolicy, endpointID)
	return selPolicy
}

const (
	StateReady               = "ready"
	StateWaitingToRegenerate = "waiting-to-regenerate"
	StateDisconnecting       = "disconnecting"
	StateDisconnected        = "disconnected"
)

type Endpoint struct {
	ID               uint64
	SecurityIdentity uint32
	mutex            sync.RWMutex
	buildMutex       sync.Mutex
	state            string
	desiredPolicy    *EndpointPolicy
	policyGetter     *policyCache
}

func (e *Endpoint) GetID() uint64 { return e.ID }

func (e *Endpoint) lockAlive() error {
	e.mutex.Lock()
	if e.state == StateDisconnected {
		e.mutex.Unlock()
		return errors.New("endpoint disconnected")
	}
	return nil
}

func (e *Endpoint) unlock() { e.mutex.Unlock() }

func (e *Endpoint) setState(s string) { e.state = s }

func (e *Endpoint) SetRegenerateStateIfAlive(regenMetadata *ExternalRegenerationMetadata) (bool, error) {
	if err := e.lockAlive(); err != nil {
		return false, err
	}
	defer e.unlock()
	if e.state == StateDisconnecting {
		return false, nil
	}
	e.setState(StateWaitingToRegenerate)
	return true, nil
}

func (e *Endpoint) Regenerate(regenMetadata *ExternalRegenerationMetadata) <-chan bool {
	done := make(chan bool, 1)
	done <- true
	return done
}

func (e *Endpoint) RegenerateIfAlive(regenMetadata *ExternalRegenerationMetadata) <-chan bool {
	regen, err := e.SetRegenerateStateIfAlive(regenMetadata)
	if err != nil {
		fmt.Println("endpoint disappeared while queued to be regenerated:", regenMetadata.Reason)
	}
	if regen {
		return e.Regenerate(regenMetadata)
	}
	ch := make(chan bool)
	close(ch)
	return ch
}

// regeneratePolicy runs with the build mutex held and the endpoint unlocked.
func (e *Endpoint) regeneratePolicy() {
	e.buildMutex.Lock()
	defer e.buildMutex.Unlock()
	selPolicy := e.policyGetter.updateSelectorPolicy(e.SecurityIdentity, e.ID)

	e.mutex.Lock()
	defer e.mutex.Unlock()
	if e.desiredPolicy != nil {
		e.desiredPolicy.Detach()
	}
	ep := &EndpointPolicy{SelectorPolicy: selPolicy, PolicyOwner: e}
	selPolicy.insertUser(ep)
	e.desiredPolicy = ep
	e.setState(StateReady)
}

func (e *Endpoint) leaveLocked() {
	// Tear down proxy redirects and datapath state first.
	time.Sleep(50 * time.Millisecond)
	if e.desiredPolicy != nil {
		e.desiredPolicy.Detach()
	}
	e.setState(StateDisconnected)
}

// Delete is called from the API handler (DELETE /endpoint/{id}).
func (e *Endpoint) Delete() {
	if err := e.lockAlive(); err != nil {
		return
	}
	defer e.unlock()
	e.setState(StateDisconnecting)
	e.leaveLocked()
}

func main() {
	cache := &policyCache{policies: map[uint32]*cachedSelectorPolicy{}}
	epA := &Endpoint{ID: 101, SecurityIdentity: 1000, policyGetter: cache}
	epB := &Endpoint{ID: 202, SecurityIdentity: 1000, policyGetter: cache}
	epA.regeneratePolicy()
	epB.regeneratePolicy()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		epB.Delete()
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		epA.regeneratePolicy()
	}()
	wg.Wait()
	fmt.Println("done")
}
