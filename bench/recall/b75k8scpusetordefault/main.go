// Project: kubernetes/kubernetes (pkg/kubelet/cm/cpumanager/state/state_mem.go, cpu_manager.go, policy_static.go), v1.10, April 2018 (PR #62464, approximate).
// Bug: stateMemory.GetCPUSetOrDefault read-locks the embedded RWMutex and then calls GetCPUSet and GetDefaultCPUSet, which read-lock it again; when the static policy's SetCPUSet/SetDefaultCPUSet (AddContainer) queues for the write lock between the two read locks, the reconcile loop and the container start path deadlock.
package main

import (
	"fmt"
	"sort"
	"sync"
)

// ---- pkg/kubelet/cm/cpuset ----

type CPUSet struct{ elems map[int]struct{} }

func NewCPUSet(cpus ...int) CPUSet {
	s := CPUSet{elems: map[int]struct{}{}}
	for _, c := range cpus {
		s.elems[c] = struct{}{}
	}
	return s
}

func (s CPUSet) IsEmpty() bool { return len(s.elems) == 0 }

func (s CPUSet) ToSlice() []int {
	var r []int
	for c := range s.elems {
		r = append(r, c)
	}
	sort.Ints(r)
	return r
}

func (s CPUSet) Clone() CPUSet { return NewCPUSet(s.ToSlice()...) }

func (s CPUSet) Difference(s2 CPUSet) CPUSet {
	r := NewCPUSet()
	for c := range s.elems {
		if _, ok := s2.elems[c]; !ok {
			r.elems[c] = struct{}{}
		}
	}
	return r
}

func (s CPUSet) Union(s2 CPUSet) CPUSet { return NewCPUSet(append(s.ToSlice(), s2.ToSlice()...)...) }

// ---- pkg/kubelet/cm/cpumanager/state/state.go, state_mem.go ----

type ContainerCPUAssignments map[string]CPUSet

type Reader interface {
	GetCPUSet(containerID string) (CPUSet, bool)
	GetDefaultCPUSet() CPUSet
	GetCPUSetOrDefault(containerID string) CPUSet
}

type writer interface {
	SetCPUSet(containerID string, cpuset CPUSet)
	SetDefaultCPUSet(cpuset CPUSet)
	Delete(containerID string)
}

type State interface {
	Reader
	writer
}

type stateMemory struct {
	sync.RWMutex
	assignments   ContainerCPUAssignments
	defaultCPUSet CPUSet
}

func NewMemoryState() State {
	return &stateMemory{assignments: ContainerCPUAssignments{}, defaultCPUSet: NewCPUSet()}
}

func (s *stateMemory) GetCPUSet(containerID string) (CPUSet, bool) {
	s.RLock()
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

// ---- pkg/kubelet/cm/cpumanager/policy_static.go ----

type Policy interface {
	AddContainer(s State, containerID string, numCPUs int) error
	RemoveContainer(s State, containerID string) error
}

type staticPolicy struct{ allCPUs CPUSet }

func (p *staticPolicy) AddContainer(s State, containerID string, numCPUs int) error {
	if _, ok := s.GetCPUSet(containerID); ok {
		return nil
	}
	free := s.GetDefaultCPUSet().ToSlice()
	if len(free) < numCPUs {
		return fmt.Errorf("not enough cpus available to satisfy request")
	}
	result := NewCPUSet(free[:numCPUs]...)
	s.SetCPUSet(containerID, result)
	s.SetDefaultCPUSet(s.GetDefaultCPUSet().Difference(result))
	return nil
}

func (p *staticPolicy) RemoveContainer(s State, containerID string) error {
	if toRelease, ok := s.GetCPUSet(containerID); ok {
		s.Delete(containerID)
		s.SetDefaultCPUSet(s.GetDefaultCPUSet().Union(toRelease))
	}
	return nil
}

// ---- pkg/kubelet/cm/cpumanager/cpu_manager.go ----

type runtimeService interface {
	UpdateContainerResources(id string, cpusetCpus []int) error
}

type fakeRuntime struct{}

func (fakeRuntime) UpdateContainerResources(string, []int) error { return nil }

type manager struct {
	sync.Mutex
	policy           Policy
	state            State
	containerRuntime runtimeService
	activeContainers func() []string
}

func (m *manager) AddContainer(containerID string, numCPUs int) error {
	m.Lock()
	err := m.policy.AddContainer(m.state, containerID, numCPUs)
	if err != nil {
		m.Unlock()
		return err
	}
	cpus := m.state.GetCPUSetOrDefault(containerID)
	m.Unlock()
	return m.updateContainerCPUSet(containerID, cpus)
}

func (m *manager) RemoveContainer(containerID string) error {
	m.Lock()
	defer m.Unlock()
	return m.policy.RemoveContainer(m.state, containerID)
}

func (m *manager) updateContainerCPUSet(containerID string, cpus CPUSet) error {
	return m.containerRuntime.UpdateContainerResources(containerID, cpus.ToSlice())
}

func (m *manager) reconcileState() (success, failure []string) {
	for _, containerID := range m.activeContainers() {
		cset := m.state.GetCPUSetOrDefault(containerID)
		if cset.IsEmpty() {
			failure = append(failure, containerID)
			continue
		}
		if err := m.updateContainerCPUSet(containerID, cset); err != nil {
			failure = append(failure, containerID)
			continue
		}
		success = append(success, containerID)
	}
	return success, failure
}

func main() {
	st := NewMemoryState()
	st.SetDefaultCPUSet(NewCPUSet(0, 1, 2, 3, 4, 5, 6, 7))
	m := &manager{policy: &staticPolicy{}, state: st, containerRuntime: fakeRuntime{},
		activeContainers: func() []string { return []string{"burstable-1", "besteffort-2", "guaranteed-3"} }}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // wait.Until(m.reconcileState, reconcilePeriod, stopCh)
		defer wg.Done()
		for i := 0; i < 200000; i++ {
			m.reconcileState()
		}
	}()
	go func() { // kubelet starting and stopping guaranteed containers
		defer wg.Done()
		for i := 0; i < 200000; i++ {
			m.AddContainer("guaranteed-3", 2)
			m.RemoveContainer("guaranteed-3")
		}
	}()
	wg.Wait()
	fmt.Println("done")
}
