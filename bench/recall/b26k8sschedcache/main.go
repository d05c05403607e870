// Project: kubernetes (kube-scheduler, pkg/scheduler/internal/cache)
// Bug: schedulerCache.UpdatePod unlocks cache.mu by hand on the success paths
// but returns the "pod is not added to scheduler cache" error with the lock
// still held, so the next UpdateSnapshot / cleanupAssumedPods blocks forever.
// Fix: take the lock with defer cache.mu.Unlock() so every return releases it.
package main

import (
	"fmt"
	"log"
	"sync"
	"time"
)

type Pod struct {
	Namespace string
	Name      string
	UID       string
	NodeName  string
	CPU       int64
}

func getPodKey(pod *Pod) (string, error) {
	if pod.UID == "" {
		return "", fmt.Errorf("cannot get cache key for pod with empty UID")
	}
	return pod.UID, nil
}

type podState struct {
	pod             *Pod
	deadline        *time.Time
	bindingFinished bool
}

type NodeInfo struct {
	Name      string
	Pods      map[string]*Pod
	Requested int64
	Gen       int64
}

func (n *NodeInfo) AddPod(p *Pod)    { n.Pods[p.UID] = p; n.Requested += p.CPU }
func (n *NodeInfo) RemovePod(p *Pod) { delete(n.Pods, p.UID); n.Requested -= p.CPU }

type Snapshot struct {
	nodeInfoMap map[string]NodeInfo
	generation  int64
}

type schedulerCache struct {
	stop   <-chan struct{}
	ttl    time.Duration
	period time.Duration

	mu          sync.RWMutex
	assumedPods map[string]bool
	podStates   map[string]*podState
	nodes       map[string]*NodeInfo
	generation  int64
}

func newSchedulerCache(ttl, period time.Duration, stop <-chan struct{}) *schedulerCache {
	return &schedulerCache{
		ttl: ttl, period: period, stop: stop,
		assumedPods: make(map[string]bool),
		podStates:   make(map[string]*podState),
		nodes:       make(map[string]*NodeInfo),
	}
}

func (cache *schedulerCache) addPod(pod *Pod) {
	n, ok := cache.nodes[pod.NodeName]
	if !ok {
		n = &NodeInfo{Name: pod.NodeName, Pods: make(map[string]*Pod)}
		cache.nodes[pod.NodeName] = n
	}
	n.AddPod(pod)
	cache.generation++
	n.Gen = cache.generation
}

func (cache *schedulerCache) removePod(pod *Pod) {
	if n, ok := cache.nodes[pod.NodeName]; ok {
		n.RemovePod(pod)
		cache.generation++
		n.Gen = cache.generation
	}
}

func (cache *schedulerCache) AddPod(pod *Pod) error {
	key, err := getPodKey(pod)
	if err != nil {
		return err
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if _, ok := cache.podStates[key]; ok && !cache.assumedPods[key] {
		return fmt.Errorf("pod %v was already in added state", key)
	}
	cache.addPod(pod)
	cache.podStates[key] = &podState{pod: pod}
	delete(cache.assumedPods, key)
	return nil
}

func (cache *schedulerCache) UpdatePod(oldPod, newPod *Pod) error {
	key, err := getPodKey(oldPod)
	if err != nil {
		return err
	}
	cache.mu.Lock()
	currState, ok := cache.podStates[key]
	switch {
	case ok && !cache.assumedPods[key]:
		if currState.pod.NodeName != newPod.NodeName {
			log.Printf("pod %v updated on a different node than previously added to", key)
		}
		cache.removePod(oldPod)
		cache.addPod(newPod)
		cache.podStates[key] = &podState{pod: newPod}
		cache.mu.Unlock()
		return nil
	default:
		return fmt.Errorf("pod %v is not added to scheduler cache, so cannot be updated", key)
	}
}

func (cache *schedulerCache) UpdateSnapshot(s *Snapshot) error {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	for name, n := range cache.nodes {
		if n.Gen <= s.generation {
			continue
		}
		s.nodeInfoMap[name] = *n
	}
	s.generation = cache.generation
	return nil
}

func (cache *schedulerCache) cleanupAssumedPods(now time.Time) {
	cache.mu.Lock()
	defer cache.mu.Unlock()
	for key := range cache.assumedPods {
		ps := cache.podStates[key]
		if ps.bindingFinished && ps.deadline != nil && now.After(*ps.deadline) {
			cache.removePod(ps.pod)
			delete(cache.assumedPods, key)
			delete(cache.podStates, key)
		}
	}
}

func (cache *schedulerCache) run() {
	go func() {
		t := time.NewTicker(cache.period)
		defer t.Stop()
		for {
			select {
			case <-cache.stop:
				return
			case now := <-t.C:
				cache.cleanupAssumedPods(now)
			}
		}
	}()
}

func main() {
	stop := make(chan struct{})
	cache := newSchedulerCache(30*time.Second, 50*time.Millisecond, stop)
	cache.run()

	p1 := &Pod{Namespace: "default", Name: "web-0", UID: "uid-web-0", NodeName: "node-a", CPU: 500}
	if err := cache.AddPod(p1); err != nil {
		log.Fatal(err)
	}

	// Informer delivers an update for a pod whose add event was never seen.
	orphan := &Pod{Namespace: "default", Name: "job-7", UID: "uid-job-7", NodeName: "node-b", CPU: 100}
	if err := cache.UpdatePod(orphan, orphan); err != nil {
		log.Printf("scheduler cache UpdatePod failed: %v", err)
	}

	snap := &Snapshot{nodeInfoMap: make(map[string]NodeInfo)}
	if err := cache.UpdateSnapshot(snap); err != nil {
		log.Fatal(err)
	}
	close(stop)
	fmt.Printf("snapshot has %d nodes\n", len(snap.nodeInfoMap))
}
