// Fixed version (PR #34 applied).
// Project: kubewharf/katalyst-core (ByteDance's Kubernetes resource
// management agent), sysadvisor QoS-aware CPU advisor, April 2023.
// Files/functions: pkg/agent/sysadvisor/plugin/qosaware/resource/cpu/region/
// region_dedicated_numa_exclusive.go
// (QoSRegionDedicatedNumaExclusive.TryUpdateProvision), region_base.go
// (QoSRegionBase.GetBindingNumas), and the CPU resource advisor's update loop
// that calls TryUpdateProvision on every region.
// Issue/PR: kubewharf/katalyst-core PR #34 "fix(sysadvisor): fix deadlock"
// ("GetBindingNumas and TryUpdateProvision both hold mutex lock").
//
// QoSRegionBase embeds a sync.Mutex, and the dedicated-NUMA-exclusive region
// embeds *QoSRegionBase. TryUpdateProvision locks the region (r.Lock(),
// promoted from the embedded mutex) for the whole provision update. For each
// provision policy it runs, once, a closure through internal.initDoOnce.Do
// that restores the initial CPU requirement: when the metacache has a
// reclaim pool, it walks r.GetBindingNumas() to subtract the reclaimed CPUs on
// the region's NUMA nodes. GetBindingNumas is the exported, locking accessor
// of QoSRegionBase, so it calls r.Lock() on the mutex TryUpdateProvision
// already holds. The advisor goroutine blocks on itself the first time a
// dedicated NUMA-exclusive pod shows up, and CPU provisioning stops for the
// node. The fix reads r.bindingNumas directly inside the closure.
package main

import (
	"fmt"
	"sort"
	"sync"
)

type CPUSet map[int]struct{}

func NewCPUSet(ids ...int) CPUSet {
	s := CPUSet{}
	for _, id := range ids {
		s[id] = struct{}{}
	}
	return s
}

func (s CPUSet) Clone() CPUSet { return NewCPUSet(s.ToSliceInt()...) }
func (s CPUSet) Size() int     { return len(s) }
func (s CPUSet) ToSliceInt() []int {
	out := make([]int, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

type PoolInfo struct {
	PoolName                 string
	TopologyAwareAssignments map[int]CPUSet
}

// MetaReader is the read side of the sysadvisor metacache.
type MetaReader interface {
	GetPoolInfo(poolName string) (*PoolInfo, bool)
}

type metaCache struct {
	mutex       sync.RWMutex
	poolEntries map[string]*PoolInfo
}

func (mc *metaCache) GetPoolInfo(poolName string) (*PoolInfo, bool) {
	mc.mutex.RLock()
	defer mc.mutex.RUnlock()
	p, ok := mc.poolEntries[poolName]
	return p, ok
}

type ProvisionPolicy interface {
	SetRequirement(requirement int)
	Update() error
}

type policyCanonical struct{ requirement int }

func (p *policyCanonical) SetRequirement(requirement int) { p.requirement = requirement }
func (p *policyCanonical) Update() error                  { return nil }

type internalProvisionPolicy struct {
	name         string
	policy       ProvisionPolicy
	initDoOnce   sync.Once
	updateStatus string
}

type ResourceEssentials struct{ Total, ReservePoolSize int }

type QoSRegion interface {
	Name() string
	TryUpdateProvision()
	GetBindingNumas() CPUSet
}

type QoSRegionBase struct {
	sync.Mutex
	name string
	ResourceEssentials
	bindingNumas      CPUSet
	provisionPolicies []*internalProvisionPolicy
	metaReader        MetaReader
}

func (r *QoSRegionBase) Name() string { return r.name }

func (r *QoSRegionBase) GetBindingNumas() CPUSet {
	r.Lock()
	defer r.Unlock()
	return r.bindingNumas.Clone()
}

type QoSRegionDedicatedNumaExclusive struct {
	*QoSRegionBase
}

func (r *QoSRegionDedicatedNumaExclusive) TryUpdateProvision() {
	r.Lock()
	defer r.Unlock()

	for _, internal := range r.provisionPolicies {
		internal.updateStatus = "failed"

		// try set initial cpu requirement to restore calculator after metaCache has been initialized
		internal.initDoOnce.Do(func() {
			reclaimedCpuSize := 0
			if reclaimedInfo, ok := r.metaReader.GetPoolInfo("reclaim"); ok {
				for _, numaID := range r.bindingNumas.ToSliceInt() {
					reclaimedCpuSize += reclaimedInfo.TopologyAwareAssignments[numaID].Size()
				}
			}
			cpuRequirement := r.Total - r.ReservePoolSize - reclaimedCpuSize
			internal.policy.SetRequirement(cpuRequirement)
			fmt.Printf("[qosaware-cpu] set initial cpu requirement %v\n", cpuRequirement)
		})

		// run an episode of policy and calculator update
		if err := internal.policy.Update(); err != nil {
			continue
		}
		internal.updateStatus = "succeeded"
	}
}

type cpuResourceAdvisor struct {
	mutex     sync.RWMutex
	regionMap map[string]QoSRegion
}

func (cra *cpuResourceAdvisor) update() {
	cra.mutex.Lock()
	defer cra.mutex.Unlock()
	for _, r := range cra.regionMap {
		r.TryUpdateProvision()
	}
}

func main() {
	mc := &metaCache{poolEntries: map[string]*PoolInfo{
		"reclaim": {PoolName: "reclaim", TopologyAwareAssignments: map[int]CPUSet{0: NewCPUSet(60, 61, 62, 63)}},
	}}
	base := &QoSRegionBase{name: "dedicated-numa-exclusive-0", ResourceEssentials: ResourceEssentials{Total: 32, ReservePoolSize: 2},
		bindingNumas: NewCPUSet(0), metaReader: mc,
		provisionPolicies: []*internalProvisionPolicy{{name: "canonical", policy: &policyCanonical{}}}}
	cra := &cpuResourceAdvisor{regionMap: map[string]QoSRegion{base.name: &QoSRegionDedicatedNumaExclusive{base}}}

	done := make(chan struct{})
	go func() { cra.update(); close(done) }() // the advisor's periodic update
	<-done
	fmt.Println("provision updated for", cra.regionMap["dedicated-numa-exclusive-0"].GetBindingNumas().ToSliceInt())
}
