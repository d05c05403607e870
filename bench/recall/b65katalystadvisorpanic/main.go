// Shape of kubewharf/katalyst-core#752 ("fix(advisor): fix deadlock on
// panic"): the sys-advisor's CPU resource advisor locks its mutex in Update
// and unlocks it only after the regions have been updated. A region's
// provision policy panics on an unexpected container, the QoS-aware plugin's
// periodic loop recovers the panic and goes on, and the mutex stays locked:
// the next Update and the QRM plugin's synchronous GetAdvice block on it.
// (The call path below the advisor is reconstructed from the PR text.)
package main

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

type ContainerInfo struct {
	PodUID, ContainerName string
	CPURequest            *float64 // nil for a container the meta cache has not fully populated
}

type MetaCache struct {
	mu         sync.RWMutex
	containers map[string]*ContainerInfo
}

func (mc *MetaCache) RangeContainer(f func(ci *ContainerInfo) bool) {
	mc.mu.RLock()
	defer mc.mu.RUnlock()
	keys := make([]string, 0, len(mc.containers))
	for k := range mc.containers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !f(mc.containers[k]) {
			return
		}
	}
}

// QoSRegion is one share/dedicated/isolation region of the node.
type QoSRegion interface {
	Name() string
	TryUpdateProvision(mc *MetaCache)
	GetProvision() float64
}

type shareRegion struct {
	name      string
	provision float64
}

func (r *shareRegion) Name() string { return r.name }

func (r *shareRegion) TryUpdateProvision(mc *MetaCache) {
	var total float64
	mc.RangeContainer(func(ci *ContainerInfo) bool {
		total += *ci.CPURequest // panics on a half-populated container
		return true
	})
	r.provision = total * 1.2
}

func (r *shareRegion) GetProvision() float64 { return r.provision }

type cpuResourceAdvisor struct {
	mutex     sync.Mutex
	metaCache *MetaCache
	regionMap map[string]QoSRegion
	advice    map[string]float64
}

func (cra *cpuResourceAdvisor) Update() {
	cra.mutex.Lock()
	cra.update()
	cra.mutex.Unlock()
}

func (cra *cpuResourceAdvisor) update() {
	for _, r := range cra.regionMap {
		r.TryUpdateProvision(cra.metaCache)
		cra.advice[r.Name()] = r.GetProvision()
	}
}

// GetAdvice serves the QRM cpu plugin's synchronous GetAdvice RPC.
func (cra *cpuResourceAdvisor) GetAdvice(pool string) (float64, bool) {
	cra.mutex.Lock()
	defer cra.mutex.Unlock()
	v, ok := cra.advice[pool]
	return v, ok
}

type QoSAwarePlugin struct {
	cpuAdvisor *cpuResourceAdvisor
	period     time.Duration
}

func (qap *QoSAwarePlugin) periodicWork() {
	defer func() {
		if r := recover(); r != nil {
			fmt.Println("qosaware: recovered from panic in periodic work:", r)
		}
	}()
	qap.cpuAdvisor.Update()
}

func (qap *QoSAwarePlugin) Run(ticks int, done chan<- struct{}) {
	for i := 0; i < ticks; i++ {
		qap.periodicWork()
		time.Sleep(qap.period)
	}
	close(done)
}

func main() {
	req := 4.0
	mc := &MetaCache{containers: map[string]*ContainerInfo{
		"pod-a/app": {PodUID: "pod-a", ContainerName: "app", CPURequest: &req},
		"pod-b/app": {PodUID: "pod-b", ContainerName: "app"}, // just admitted, request not filled in yet
	}}
	cra := &cpuResourceAdvisor{metaCache: mc, regionMap: map[string]QoSRegion{"share": &shareRegion{name: "share"}}, advice: map[string]float64{}}
	qap := &QoSAwarePlugin{cpuAdvisor: cra, period: 30 * time.Millisecond}

	done := make(chan struct{})
	go qap.Run(2, done)

	time.Sleep(10 * time.Millisecond)
	// The QRM cpu plugin asks for advice while allocating a new container.
	v, ok := cra.GetAdvice("share")
	fmt.Println("share pool advice:", v, ok)
	<-done
}
