// Project: kubernetes (pkg/kubelet/pod_workers.go)
// Bug: podWorkers.UpdatePod took podLock and, on the "pod already terminated"
// early-exit path added for SyncPodKill, returned without unlocking. The next
// UpdatePod, or the worker's wrapUp after a sync, blocks forever on podLock.
package main

import (
	"sync"
	"time"
)

type UID string

type SyncPodType int

const (
	SyncPodUpdate SyncPodType = iota
	SyncPodKill
)

type Pod struct {
	UID     UID
	Deleted bool
}

type UpdatePodOptions struct {
	Pod        *Pod
	UpdateType SyncPodType
}

type syncPodFnType func(pod *Pod, updateType SyncPodType) error

type podWorkers struct {
	podLock    sync.Mutex
	podUpdates map[UID]chan UpdatePodOptions
	isWorking  map[UID]bool
	terminated map[UID]bool
	syncPodFn  syncPodFnType
}

func newPodWorkers(fn syncPodFnType) *podWorkers {
	return &podWorkers{
		podUpdates: map[UID]chan UpdatePodOptions{},
		isWorking:  map[UID]bool{},
		terminated: map[UID]bool{},
		syncPodFn:  fn,
	}
}

func (p *podWorkers) managePodLoop(updates <-chan UpdatePodOptions) {
	for update := range updates {
		err := p.syncPodFn(update.Pod, update.UpdateType)
		p.wrapUp(update.Pod.UID, update.UpdateType, err)
	}
}

func (p *podWorkers) wrapUp(uid UID, updateType SyncPodType, err error) {
	p.podLock.Lock()
	defer p.podLock.Unlock()
	p.isWorking[uid] = false
	if err == nil && updateType == SyncPodKill {
		p.terminated[uid] = true
	}
}

func (p *podWorkers) UpdatePod(options *UpdatePodOptions) {
	pod := options.Pod
	uid := pod.UID
	p.podLock.Lock()
	if pod.Deleted && options.UpdateType == SyncPodKill && p.terminated[uid] {
		// already killed, nothing to do
		return
	}
	podUpdates, exists := p.podUpdates[uid]
	if !exists {
		podUpdates = make(chan UpdatePodOptions, 1)
		p.podUpdates[uid] = podUpdates
		go p.managePodLoop(podUpdates)
	}
	if !p.isWorking[uid] {
		p.isWorking[uid] = true
		podUpdates <- *options
	}
	p.podLock.Unlock()
}

func main() {
	pw := newPodWorkers(func(pod *Pod, t SyncPodType) error { return nil })
	pod := &Pod{UID: "1234", Deleted: true}
	go func() {
		for i := 0; i < 3; i++ {
			pw.UpdatePod(&UpdatePodOptions{Pod: pod, UpdateType: SyncPodKill})
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(time.Second)
}
