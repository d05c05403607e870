// Shape of kubewharf/katalyst-core #34 ("fix(sysadvisor): fix deadlock":
// "GetBindingNumas and TryUpdateProvision both hold mutex lock").
//
// QoS regions embed QoSRegionBase, whose sync.Mutex guards the region and
// whose exported getters (GetBindingNumas, GetPods, ...) lock it. The share
// region's TryUpdateProvision locks the region and then calls the promoted
// getter GetBindingNumas, which locks the same embedded mutex again; the CPU
// resource advisor's update loop hangs on the first share region.
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

func (s CPUSet) Clone() CPUSet {
	c := CPUSet{}
	for k := range s {
		c[k] = struct{}{}
	}
	return c
}

type PodSet map[string][]string // podUID -> containers

type ControlKnob map[string]float64

type ProvisionPolicy interface {
	SetPodSet(PodSet)
	SetBindingNumas(CPUSet)
	Update() error
	GetControlKnobAdjusted() (ControlKnob, error)
}

type canonicalPolicy struct {
	pods  PodSet
	numas CPUSet
	knob  ControlKnob
}

func (p *canonicalPolicy) SetPodSet(ps PodSet)      { p.pods = ps }
func (p *canonicalPolicy) SetBindingNumas(n CPUSet) { p.numas = n }
func (p *canonicalPolicy) Update() error {
	p.knob = ControlKnob{"cpu-requirement": float64(4 * len(p.numas))}
	return nil
}
func (p *canonicalPolicy) GetControlKnobAdjusted() (ControlKnob, error) { return p.knob, nil }

type QoSRegion interface {
	Name() string
	GetBindingNumas() CPUSet
	TryUpdateProvision()
	GetProvision() (ControlKnob, error)
}

type QoSRegionBase struct {
	sync.Mutex
	name         string
	bindingNumas CPUSet
	podSet       PodSet
	controlKnob  ControlKnob
	policy       ProvisionPolicy
}

func (r *QoSRegionBase) Name() string { return r.name }

func (r *QoSRegionBase) GetBindingNumas() CPUSet {
	r.Lock()
	defer r.Unlock()
	return r.bindingNumas.Clone()
}

func (r *QoSRegionBase) GetProvision() (ControlKnob, error) {
	r.Lock()
	defer r.Unlock()
	return r.controlKnob, nil
}

// isolation regions: fixed provision, nothing to compute
type QoSRegionIsolation struct{ *QoSRegionBase }

func (r *QoSRegionIsolation) TryUpdateProvision() {
	r.Lock()
	defer r.Unlock()
	r.controlKnob = ControlKnob{"cpu-requirement": 2}
}

type QoSRegionShare struct{ *QoSRegionBase }

func (r *QoSRegionShare) TryUpdateProvision() {
	r.Lock()
	defer r.Unlock()
	r.policy.SetPodSet(r.podSet)
	r.policy.SetBindingNumas(r.GetBindingNumas()) // BUG: promoted getter locks the embedded mutex again
	if err := r.policy.Update(); err != nil {
		return
	}
	r.controlKnob, _ = r.policy.GetControlKnobAdjusted()
}

type cpuResourceAdvisor struct {
	mu        sync.Mutex
	regionMap map[string]QoSRegion
}

func (cra *cpuResourceAdvisor) update() map[string]ControlKnob {
	cra.mu.Lock()
	defer cra.mu.Unlock()
	names := make([]string, 0, len(cra.regionMap))
	for n := range cra.regionMap {
		names = append(names, n)
	}
	sort.Strings(names) // isolation-* before share-*
	result := map[string]ControlKnob{}
	for _, n := range names {
		region := cra.regionMap[n]
		region.TryUpdateProvision()
		knob, _ := region.GetProvision()
		result[n] = knob
	}
	return result
}

func main() {
	cra := &cpuResourceAdvisor{regionMap: map[string]QoSRegion{
		"isolation-pod1": &QoSRegionIsolation{&QoSRegionBase{name: "isolation-pod1", bindingNumas: NewCPUSet(0)}},
		"share-numa0": &QoSRegionShare{&QoSRegionBase{
			name: "share-numa0", bindingNumas: NewCPUSet(0, 1),
			podSet: PodSet{"uid-1": {"app"}}, policy: &canonicalPolicy{},
		}},
	}}
	done := make(chan map[string]ControlKnob)
	go func() { done <- cra.update() }() // sysadvisor periodic update
	for name, knob := range <-done {
		fmt.Println(name, knob)
	}
}
