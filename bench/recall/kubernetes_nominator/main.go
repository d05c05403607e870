// Project: kubernetes (pkg/scheduler/internal/queue/scheduling_queue.go, nominator)
// Bug: PriorityQueue.Update holds p.lock and calls the embedded nominator, which takes nLock.
// The preemption path (framework handle -> PodNominator.AddNominatedPod) holds nLock and asks the
// pod lister (the queue itself) whether the pod is still pending, which takes p.lock: AB-BA between
// the queue lock and the nominator lock.
// Upstream fix: nominator no longer calls back into the queue while holding nLock (pod is looked up before taking nLock); modelled, PR number not recalled.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Pod struct {
	Namespace         string
	Name              string
	NominatedNodeName string
	Priority          int32
}

func podKey(p *Pod) string { return p.Namespace + "/" + p.Name }

type QueuedPodInfo struct {
	Pod       *Pod
	Attempts  int
	Timestamp time.Time
}

// PodNominator is what the framework handle exposes to plugins (e.g. DefaultPreemption).
type PodNominator interface {
	AddNominatedPod(pod *Pod, nodeName string)
	NominatedPodsForNode(nodeName string) []*Pod
}

type podLister interface {
	GetPod(namespace, name string) (*Pod, bool)
}

type nominator struct {
	nLock              sync.RWMutex
	podLister          podLister
	nominatedPods      map[string][]*Pod
	nominatedPodToNode map[string]string
}

func newPodNominator(lister podLister) *nominator {
	return &nominator{
		podLister:          lister,
		nominatedPods:      make(map[string][]*Pod),
		nominatedPodToNode: make(map[string]string),
	}
}

func (npm *nominator) AddNominatedPod(pod *Pod, nodeName string) {
	npm.nLock.Lock()
	defer npm.nLock.Unlock()
	npm.addNominatedPodUnlocked(pod, nodeName)
}

func (npm *nominator) addNominatedPodUnlocked(pod *Pod, nodeName string) {
	npm.deleteUnlocked(pod)
	// Make sure the pod is still pending; it may have been bound meanwhile.
	updated, ok := npm.podLister.GetPod(pod.Namespace, pod.Name)
	if !ok || (updated.NominatedNodeName == "" && nodeName == "") {
		return
	}
	if nodeName == "" {
		nodeName = updated.NominatedNodeName
	}
	npm.nominatedPodToNode[podKey(pod)] = nodeName
	npm.nominatedPods[nodeName] = append(npm.nominatedPods[nodeName], updated)
}

func (npm *nominator) deleteUnlocked(pod *Pod) {
	nnn, ok := npm.nominatedPodToNode[podKey(pod)]
	if !ok {
		return
	}
	pods := npm.nominatedPods[nnn]
	for i, np := range pods {
		if podKey(np) == podKey(pod) {
			npm.nominatedPods[nnn] = append(pods[:i], pods[i+1:]...)
			break
		}
	}
	delete(npm.nominatedPodToNode, podKey(pod))
}

func (npm *nominator) UpdateNominatedPod(oldPod, newPod *Pod) {
	npm.nLock.Lock()
	defer npm.nLock.Unlock()
	nodeName := npm.nominatedPodToNode[podKey(oldPod)]
	npm.deleteUnlocked(oldPod)
	if nodeName != "" {
		npm.nominatedPodToNode[podKey(newPod)] = nodeName
		npm.nominatedPods[nodeName] = append(npm.nominatedPods[nodeName], newPod)
	}
}

func (npm *nominator) NominatedPodsForNode(nodeName string) []*Pod {
	npm.nLock.RLock()
	defer npm.nLock.RUnlock()
	return append([]*Pod(nil), npm.nominatedPods[nodeName]...)
}

type PriorityQueue struct {
	*nominator

	lock    sync.RWMutex
	activeQ map[string]*QueuedPodInfo
}

func NewPriorityQueue() *PriorityQueue {
	pq := &PriorityQueue{activeQ: make(map[string]*QueuedPodInfo)}
	pq.nominator = newPodNominator(pq)
	return pq
}

func (p *PriorityQueue) Add(pod *Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.activeQ[podKey(pod)] = &QueuedPodInfo{Pod: pod, Timestamp: time.Now()}
}

// GetPod implements podLister for the nominator.
func (p *PriorityQueue) GetPod(namespace, name string) (*Pod, bool) {
	p.lock.RLock()
	defer p.lock.RUnlock()
	pi, ok := p.activeQ[namespace+"/"+name]
	if !ok {
		return nil, false
	}
	return pi.Pod, true
}

// Update is called by the pod informer's UpdateFunc.
func (p *PriorityQueue) Update(oldPod, newPod *Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	if pInfo, ok := p.activeQ[podKey(oldPod)]; ok {
		p.UpdateNominatedPod(oldPod, newPod)
		pInfo.Pod = newPod
	}
}

type frameworkHandle struct{ PodNominator }

func preempt(fh *frameworkHandle, pod *Pod, node string) {
	fh.AddNominatedPod(pod, node)
}

func main() {
	q := NewPriorityQueue()
	pod := &Pod{Namespace: "default", Name: "web-0", Priority: 100}
	q.Add(pod)
	fh := &frameworkHandle{PodNominator: q}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // informer event handler
		defer wg.Done()
		for i := 0; i < 100000; i++ {
			np := *pod
			np.NominatedNodeName = "node-a"
			q.Update(pod, &np)
		}
	}()
	go func() { // scheduling cycle, PostFilter preemption
		defer wg.Done()
		for i := 0; i < 100000; i++ {
			preempt(fh, pod, "node-a")
		}
	}()
	wg.Wait()
	fmt.Println("nominated on node-a:", len(fh.NominatedPodsForNode("node-a")))
}
