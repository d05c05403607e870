// Modeled on a kubelet deadlock between the status manager and the pod
// manager (pkg/kubelet/status and pkg/kubelet/pod): syncBatch held
// podStatusesLock while resolving mirror pods through the pod manager
// (basicManager.lock), while the pod manager's UpdatePod path, holding
// basicManager.lock, called back into the status manager
// (TerminatePod -> updateStatusInternal) which takes podStatusesLock.
package main

import (
	"fmt"
	"sync"
	"time"
)

type basicManager struct {
	lock           sync.RWMutex
	podByUID       map[string]string
	mirrorPodByUID map[string]string
	statusManager  *manager
}

func (pm *basicManager) GetPodByMirrorPod(uid string) (string, bool) {
	pm.lock.RLock()
	defer pm.lock.RUnlock()
	name, ok := pm.mirrorPodByUID[uid]
	return name, ok
}

func (pm *basicManager) translatePodUID(uid string) string {
	if name, ok := pm.GetPodByMirrorPod(uid); ok {
		return name
	}
	return uid
}

func (pm *basicManager) UpdatePod(uid, name string, terminated bool) {
	pm.lock.Lock()
	defer pm.lock.Unlock()
	pm.podByUID[uid] = name
	if terminated {
		pm.statusManager.TerminatePod(uid)
	}
}

type manager struct {
	podStatusesLock sync.RWMutex
	podStatuses     map[string]string
	podManager      *basicManager
}

func (m *manager) TerminatePod(uid string) { m.updateStatusInternal(uid, "Failed") }

func (m *manager) updateStatusInternal(uid, phase string) {
	m.podStatusesLock.Lock()
	defer m.podStatusesLock.Unlock()
	m.podStatuses[uid] = phase
}

func (m *manager) needsReconcile(uid string) bool {
	return m.podManager.translatePodUID(uid) != uid
}

func (m *manager) syncBatch() {
	m.podStatusesLock.RLock()
	defer m.podStatusesLock.RUnlock()
	for uid := range m.podStatuses {
		_ = m.needsReconcile(uid)
	}
}

func main() {
	pm := &basicManager{podByUID: map[string]string{}, mirrorPodByUID: map[string]string{}}
	sm := &manager{podStatuses: map[string]string{"uid-1": "Running"}, podManager: pm}
	pm.statusManager = sm

	go func() { // status manager sync loop
		for i := 0; i < 100; i++ {
			sm.syncBatch()
		}
	}()
	go func() { // config source updates
		for i := 0; i < 100; i++ {
			pm.UpdatePod(fmt.Sprint("uid-", i), "nginx", i%2 == 0)
		}
	}()
	time.Sleep(50 * time.Millisecond)
}
