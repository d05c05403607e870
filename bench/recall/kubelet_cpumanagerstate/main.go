// Project: Kubernetes kubelet (pkg/kubelet/cm/cpumanager/state/state_mem.go, cpu_manager.go, policy_static.go)
// Bug: stateMemory.GetCPUSetOrDefault (called by the manager's reconcileState loop) takes s.RLock() and,
//      still holding it, calls GetCPUSet / GetDefaultCPUSet, which RLock the same RWMutex again.
//      If pod removal (staticPolicy.RemoveContainer -> SetDefaultCPUSet) calls s.Lock() between the two
//      RLocks, the writer waits for the outer reader and the nested RLock waits behind the writer.
// Upstream fix: kubernetes/kubernetes#62464 drops the outer RLock so GetCPUSetOrDefault only calls the locking getters.

package main

import (
	"fmt"
	"slices"
	"sync"
)

type CPUSet []int

func (s CPUSet) Union(o CPUSet) CPUSet { return append(slices.Clone(s), o...) }

type ContainerCPUAssignments map[string]CPUSet

type stateMemory struct {
	sync.RWMutex
	assignments   ContainerCPUAssignments
	defaultCPUSet CPUSet
}

func (s *stateMemory) GetCPUSet(containerID string) (CPUSet, bool) {
	s.RLock() // DEADLOCK HERE
	defer s.RUnlock()
	res, ok := s.assignments[containerID]
	return slices.Clone(res), ok
}

func (s *stateMemory) GetDefaultCPUSet() CPUSet {
	s.RLock()
	defer s.RUnlock()
	return slices.Clone(s.defaultCPUSet)
}

func (s *stateMemory) GetCPUSetOrDefault(containerID string) CPUSet {
	s.RLock()
	defer s.RUnlock()
	if res, ok := s.GetCPUSet(containerID); ok {
		return res
	}
	return s.GetDefaultCPUSet()
}

func (s *stateMemory) SetCPUSet(containerID string, cset CPUSet) {
	s.Lock()
	defer s.Unlock()
	s.assignments[containerID] = cset
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

func (p *staticPolicy) AddContainer(s *stateMemory, containerID string) {
	if free := s.GetDefaultCPUSet(); len(free) > 0 {
		s.SetCPUSet(containerID, free[:1])
		s.SetDefaultCPUSet(free[1:])
	}
}

func (p *staticPolicy) RemoveContainer(s *stateMemory, containerID string) {
	if toRelease, ok := s.GetCPUSet(containerID); ok {
		s.Delete(containerID)
		s.SetDefaultCPUSet(s.GetDefaultCPUSet().Union(toRelease))
	}
}

type manager struct {
	state  *stateMemory
	policy *staticPolicy
}

func (m *manager) reconcileState(containerIDs []string) (n int) {
	for _, id := range containerIDs {
		n += len(m.state.GetCPUSetOrDefault(id))
	}
	return n
}

func main() {
	st := &stateMemory{assignments: ContainerCPUAssignments{}, defaultCPUSet: CPUSet{0, 1, 2, 3}}
	m := &manager{state: st, policy: &staticPolicy{}}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 200000 {
			m.reconcileState([]string{"nginx", "sidecar"})
		}
	})
	wg.Go(func() {
		for i := range 200000 {
			id := fmt.Sprintf("ctr-%d", i)
			m.policy.AddContainer(st, id)
			m.policy.RemoveContainer(st, id)
		}
	})
	wg.Wait()
	fmt.Println("reconcile done, default set:", len(st.GetDefaultCPUSet()))
}
