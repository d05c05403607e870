// kubernetes pkg/kubelet/status_manager.go: SetPodStatus holds podStatusesLock
// while sending on the bounded podStatusChannel. The sync goroutine draining
// that channel calls DeletePodStatus (podStatusesLock) when the apiserver
// update fails because the pod is already gone. Once the channel fills up
// (mass pod deletion), the kubelet wedges. kubernetes/kubernetes#10182
// (reported as #9833).
// Fixed twin: the send under the lock is non-blocking; a full channel drops the
// request and the periodic resync catches up (as in kubernetes#16223).
package main

import (
	"fmt"
	"sync"
)

type podStatusSyncRequest struct {
	podUID string
	phase  string
}

type podStatusUpdater interface {
	UpdateStatus(podUID, phase string) error
}

// apiserver where every pod has just been deleted.
type deletedPodsClient struct{}

func (deletedPodsClient) UpdateStatus(podUID, phase string) error {
	return fmt.Errorf("pods %q not found", podUID)
}

type statusManager struct {
	kubeClient       podStatusUpdater
	podStatusesLock  sync.RWMutex
	podStatuses      map[string]string
	podStatusChannel chan podStatusSyncRequest
}

func newStatusManager(c podStatusUpdater) *statusManager {
	return &statusManager{
		kubeClient:       c,
		podStatuses:      make(map[string]string),
		podStatusChannel: make(chan podStatusSyncRequest, 4),
	}
}

func (s *statusManager) Start() {
	go func() {
		for {
			_ = s.syncBatch()
		}
	}()
}

func (s *statusManager) SetPodStatus(podUID, phase string) {
	s.podStatusesLock.Lock()
	defer s.podStatusesLock.Unlock()
	if old, ok := s.podStatuses[podUID]; ok && old == phase {
		return
	}
	s.podStatuses[podUID] = phase
	select {
	case s.podStatusChannel <- podStatusSyncRequest{podUID, phase}:
	default:
		// Channel full; the periodic sync will reconcile this pod.
	}
}

func (s *statusManager) DeletePodStatus(podUID string) {
	s.podStatusesLock.Lock()
	defer s.podStatusesLock.Unlock()
	delete(s.podStatuses, podUID)
}

// syncBatch syncs one pod status with the apiserver.
func (s *statusManager) syncBatch() error {
	req := <-s.podStatusChannel
	if err := s.kubeClient.UpdateStatus(req.podUID, req.phase); err != nil {
		// The pod is gone; forget its cached status.
		s.DeletePodStatus(req.podUID)
		return err
	}
	return nil
}

func main() {
	sm := newStatusManager(deletedPodsClient{})
	sm.Start()

	// Pod workers: the user deleted every multi-container pod on the node.
	var wg sync.WaitGroup
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for c := 0; c < 200; c++ {
				uid := fmt.Sprintf("pod-%d-%d", w, c)
				sm.SetPodStatus(uid, "Running")
				sm.SetPodStatus(uid, "Succeeded")
			}
		}(w)
	}
	wg.Wait()
	fmt.Println("all pod workers finished")
}
