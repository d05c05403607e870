// Project: kubernetes (pkg/kubelet/cm/cpumanager/state/state_mem.go, cpu_manager.go, policy_static.go)
// Bug: the reconcile goroutine calls stateMemory.GetCPUSetOrDefault, which takes s.RLock and then
// calls GetCPUSet, which takes s.RLock again. If the static policy's RemoveContainer calls
// SetDefaultCPUSet (s.Lock) between the two RLocks, the writer waits for the first reader
// and the nested RLock waits behind the pending writer (kubelet hangs removing pods).
// Upstream fix: kubernetes/kubernetes#62464 dropped the outer RLock in GetCPUSetOrDefault.

package main

import (
	"fmt"
	"sort"
	"sync"
)

type CPUSet []int

func (s CPUSet) Clone() CPUSet { return append(CPUSet(nil), s...) }
func (s CPUSet) Union(o CPUSet) CPUSet {
	u := append(s.Clone(), o...)
	sort.Ints(u)
	return u
}

type State interface {
	GetCPUSet(containerID string) (CPUSet, bool)
	GetDefaultCPUSet() CPUSet
	GetCPUSetOrDefault(containerID string) CPUSet
	SetDefaultCPUSet(cset CPUSet)
	Delete(containerID string)
}

type stateMemory struct {
	sync.RWMutex
	assignments   map[string]CPUSet
	defaultCPUSet CPUSet
}

func (s *stateMemory) GetCPUSet(containerID string) (CPUSet, bool) {
	s.RLock() // DEADLOCK HERE
	defer s.RUnlock()
	res, ok := s.assignments[containerID]
	return res.Clone(), ok
}

func (s *stateMemory) GetDefaultCPUSet() CPUSet {
	s.RLock()
	defer s.RUnlock()
	return s.defaultCPUSet.Clone()
}

func (s *stateMemory) GetCPUSetOrDefault(containerID string) CPUSet {
	s.RLock()
	defer s.RUnlock()
	if res, ok := s.GetCPUSet(containerID); ok {
		return res
	}
	return s.GetDefaultCPUSet()
}

func (s *stateMemory) SetDefaultCPUSet(cset CPUSet) {
	s.Lock()
	defer s.Unlock()
	s.defaultCPUSet = cset
}

func (s *stateMemory) Delete(containerID string) {
	s.Lock()
	defer s.Unlock()
	delete(s.assignments, containerID)
}

type staticPolicy struct{}

func (p *staticPolicy) RemoveContainer(s State, containerID string) error {
	if toRelease, ok := s.GetCPUSet(containerID); ok {
		s.Delete(containerID)
		s.SetDefaultCPUSet(s.GetDefaultCPUSet().Union(toRelease))
	}
	return nil
}

type manager struct {
	policy *staticPolicy
	state  State
}

func (m *manager) reconcileState(containerIDs []string) (success, failure []string) {
	for _, id := range containerIDs {
		if cset := m.state.GetCPUSetOrDefault(id); len(cset) == 0 {
			failure = append(failure, id)
		} else {
			success = append(success, id)
		}
	}
	return success, failure
}

func main() {
	st := &stateMemory{assignments: map[string]CPUSet{"c1": {2}, "c2": {3}, "c3": {4}, "c4": {5}}, defaultCPUSet: CPUSet{0, 1}}
	m := &manager{policy: &staticPolicy{}, state: st}
	ids := []string{"c1", "c2", "c3", "c4"}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 1000 {
			m.reconcileState(ids)
		}
	}()
	go func() {
		defer wg.Done()
		for _, id := range ids {
			m.policy.RemoveContainer(m.state, id)
		}
	}()
	wg.Wait()
	fmt.Println("default cpuset:", m.state.GetDefaultCPUSet())
}
