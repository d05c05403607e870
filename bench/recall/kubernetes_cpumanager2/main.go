// Project: Kubernetes (kubelet, pkg/kubelet/cm/cpumanager/state/state_mem.go)
// Bug: stateMemory.GetCPUSetOrDefault takes s.RLock() and then calls the
//
//	exported GetCPUSet / GetDefaultCPUSet, which take s.RLock() again.
//	If the static policy calls SetDefaultCPUSet (s.Lock()) between the
//	outer and the inner RLock, the pending writer blocks the inner RLock,
//	and the writer waits for the outer RLock: the reconcile loop and the
//	policy's AddContainer path hang forever (recursive read lock).
//
// Upstream fix: kubernetes/kubernetes#62464 (as recalled; GoBench
//
//	kubernetes62464): drop the outer RLock in GetCPUSetOrDefault.
package main

import (
	"fmt"
	"sort"
	"sync"
)

// CPUSet is a trimmed-down pkg/kubelet/cm/cpuset.CPUSet.
type CPUSet struct{ elems map[int]struct{} }

func NewCPUSet(cpus ...int) CPUSet {
	s := CPUSet{elems: map[int]struct{}{}}
	for _, c := range cpus {
		s.elems[c] = struct{}{}
	}
	return s
}

func (s CPUSet) Clone() CPUSet {
	r := CPUSet{elems: make(map[int]struct{}, len(s.elems))}
	for c := range s.elems {
		r.elems[c] = struct{}{}
	}
	return r
}

func (s CPUSet) String() string {
	var l []int
	for c := range s.elems {
		l = append(l, c)
	}
	sort.Ints(l)
	return fmt.Sprint(l)
}

type ContainerCPUAssignments map[string]CPUSet

type stateMemory struct {
	sync.RWMutex
	assignments   ContainerCPUAssignments
	defaultCPUSet CPUSet
}

func NewMemoryState() *stateMemory {
	return &stateMemory{assignments: ContainerCPUAssignments{}, defaultCPUSet: NewCPUSet()}
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

func (s *stateMemory) SetCPUSet(containerID string, cset CPUSet) {
	s.Lock()
	defer s.Unlock()

	s.assignments[containerID] = cset
}

// reconcileState mimics manager.reconcileState: for every running container
// look up the cpuset it should be pinned to.
func reconcileState(st *stateMemory, containers []string, rounds int) {
	for i := 0; i < rounds; i++ {
		for _, id := range containers {
			_ = st.GetCPUSetOrDefault(id)
		}
	}
}

// staticPolicyAddContainer mimics staticPolicy.AddContainer shrinking the
// shared pool whenever an exclusive container is admitted.
func staticPolicyAddContainer(st *stateMemory, rounds int) {
	for i := 0; i < rounds; i++ {
		st.SetCPUSet(fmt.Sprintf("exclusive-%d", i%4), NewCPUSet(i%8))
		st.SetDefaultCPUSet(NewCPUSet(8, 9, 10, 11, 12, 13, 14, 15))
	}
}

func main() {
	st := NewMemoryState()
	st.SetDefaultCPUSet(NewCPUSet(0, 1, 2, 3, 4, 5, 6, 7))

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); reconcileState(st, []string{"shared-a", "exclusive-1"}, 200000) }()
	go func() { defer wg.Done(); staticPolicyAddContainer(st, 200000) }()
	wg.Wait()
	fmt.Println("default cpuset:", st.GetDefaultCPUSet())
}
