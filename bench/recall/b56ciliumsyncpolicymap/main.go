// Project: cilium/cilium (Kubernetes CNI agent), v1.1 development, May 2018.
// Files: pkg/endpoint/bpf.go (Endpoint.regenerateBPF, Endpoint.syncPolicyMap),
// pkg/endpoint/policy.go (Endpoint.regenerate, Endpoint.Regenerate),
// pkg/endpoint/endpoint.go (LockAlive, GetModel), pkg/maps/policymap
// (PolicyMap.DumpToSlice).
// Issue: cilium/cilium#4140; fixed by PR cilium/cilium#4141
// "pkg/endpoint: release lock if syncPolicyMap fails".
//
// Endpoint regeneration runs regenerateBPF, which takes the endpoint mutex
// with LockAlive, writes the endpoint headers and then synchronously
// reconciles the BPF PolicyMap with the desired policy state via
// syncPolicyMap before unlocking the endpoint further down. syncPolicyMap
// starts by dumping the kernel map (PolicyMap.DumpToSlice); when that dump (or
// a later map update) fails, regenerateBPF returned "unable to regenerate
// policy because PolicyMap synchronization failed" without e.Mutex.Unlock().
// The regeneration goroutine moves on, but the endpoint stays locked: the
// next API request for the endpoint (GET /endpoint/{id} -> GetModel), the
// next policy regeneration (LockAlive) and endpoint deletion all block on
// e.Mutex forever, and the agent stops making progress for that pod. The fix
// unlocks the endpoint mutex on that error path before returning.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- pkg/maps/policymap ----

type PolicyEntryDump struct {
	Key      string
	Packets  uint64
	ProxyPrt uint16
}

type PolicyMap struct {
	path     string
	dumpFail int
}

func (pm *PolicyMap) DumpToSlice() ([]PolicyEntryDump, error) {
	if pm.dumpFail > 0 {
		pm.dumpFail--
		return nil, errors.New("unable to dump map " + pm.path + ": resource temporarily unavailable")
	}
	return []PolicyEntryDump{{Key: "identity=2 dport=80/TCP"}}, nil
}

func (pm *PolicyMap) AllowKey(k string) error { return nil }

// ---- pkg/endpoint ----

type Owner interface {
	GetCompilationLock() *sync.RWMutex
}

type Endpoint struct {
	ID               uint16
	Mutex            sync.RWMutex
	state            string
	PolicyMap        *PolicyMap
	desiredMapState  map[string]struct{}
	realizedMapState map[string]struct{}
}

func (e *Endpoint) LockAlive() error {
	e.Mutex.Lock()
	if e.state == "disconnecting" {
		e.Mutex.Unlock()
		return fmt.Errorf("lock failed: endpoint is in the process of being removed")
	}
	return nil
}

func (e *Endpoint) Unlock() { e.Mutex.Unlock() }

// syncPolicyMap makes the PolicyMap of the endpoint match the desired state.
func (e *Endpoint) syncPolicyMap() error {
	if e.PolicyMap == nil {
		return fmt.Errorf("not syncing PolicyMap state for endpoint because PolicyMap is nil")
	}
	currentMapContents, err := e.PolicyMap.DumpToSlice()
	if err != nil {
		return err
	}
	for k := range e.desiredMapState {
		if err := e.PolicyMap.AllowKey(k); err != nil {
			return err
		}
		e.realizedMapState[k] = struct{}{}
	}
	_ = currentMapContents
	return nil
}

func (e *Endpoint) regenerateBPF(owner Owner, epdir, reason string) (uint64, error) {
	owner.GetCompilationLock().RLock()
	defer owner.GetCompilationLock().RUnlock()

	if err := e.LockAlive(); err != nil {
		return 0, err
	}
	// write lxc_config.h / node_config.h into epdir
	time.Sleep(5 * time.Millisecond)

	// Synchronously try to update PolicyMap for this endpoint. If any part
	// of updating the PolicyMap fails, bail out and do not generate BPF.
	if err := e.syncPolicyMap(); err != nil {
		return 0, fmt.Errorf("unable to regenerate policy because PolicyMap synchronization failed: %s", err)
	}
	e.state = "ready"
	e.Unlock()
	return 1, nil
}

func (e *Endpoint) regenerate(owner Owner, reason string) error {
	revision, err := e.regenerateBPF(owner, fmt.Sprintf("/var/run/cilium/state/%d", e.ID), reason)
	if err != nil {
		return err
	}
	fmt.Println("regenerated endpoint", e.ID, "revision", revision)
	return nil
}

// Regenerate forces the regeneration of endpoint programs & policy
func (e *Endpoint) Regenerate(owner Owner, reason string) <-chan bool {
	done := make(chan bool, 1)
	go func() {
		err := e.regenerate(owner, reason)
		if err != nil {
			fmt.Println("endpoint", e.ID, "regeneration failed:", err)
		}
		done <- err == nil
	}()
	return done
}

// GetModel returns the API model of endpoint e.
func (e *Endpoint) GetModel() string {
	e.Mutex.RLock()
	defer e.Mutex.RUnlock()
	return fmt.Sprintf("{id: %d, state: %s, policy-entries: %d}", e.ID, e.state, len(e.realizedMapState))
}

type daemon struct{ compilationMutex sync.RWMutex }

func (d *daemon) GetCompilationLock() *sync.RWMutex { return &d.compilationMutex }

func main() {
	d := &daemon{}
	e := &Endpoint{ID: 3981, state: "waiting-to-regenerate",
		PolicyMap:        &PolicyMap{path: "/sys/fs/bpf/tc/globals/cilium_policy_03981", dumpFail: 1},
		desiredMapState:  map[string]struct{}{"identity=2 dport=80/TCP": {}},
		realizedMapState: map[string]struct{}{}}

	<-e.Regenerate(d, "policy rules added")

	// cilium endpoint get 3981 (API handler)
	fmt.Println(e.GetModel())
}
