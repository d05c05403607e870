// Project: palantir/k8s-spark-scheduler (Kubernetes scheduler extender for
// Spark), 2019, soft reservations for dynamic allocation.
// Files/functions: internal/cache/softreservations.go
// (SoftReservationStore.ExecutorHasSoftReservation, GetSoftReservation,
// onPodDeletion, removeExecutorReservation), internal/extender/overhead.go
// (OverheadComputer.compute), the pod informer's DeleteFunc handler.
// Fix: PR #82 "Fixes a probable deadlock condition in the
// SoftReservationStore".
//
// ExecutorHasSoftReservation read-locks storeLock and, while holding it,
// calls the exported GetSoftReservation, which read-locks storeLock again to
// deep-copy the application's soft reservation. The overhead computer calls
// ExecutorHasSoftReservation for every executor pod on its periodic pass.
// When an executor pod is deleted in between, the informer's DeleteFunc runs
// onPodDeletion -> removeExecutorReservation, which asks for the write lock;
// the writer waits for the outer read lock and the inner read lock waits
// behind the writer, wedging both the overhead computer and the informer.
// The fix reads s.store[appID] directly under the read lock it already holds.
package main

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"
)

const (
	SparkRoleLabel, SparkAppIDLabel = "spark-role", "spark-app-id"
	Driver, Executor                = "driver", "executor"
)

type Pod struct {
	Name     string
	NodeName string
	Labels   map[string]string
}

type Reservation struct {
	Node   string
	CPU    int64
	Memory int64
}

type SoftReservation struct {
	Reservations map[string]Reservation
	Status       map[string]bool
}

type SoftReservationStore struct {
	store     map[string]*SoftReservation // SparkAppID -> SoftReservation
	storeLock sync.RWMutex
}

// ResourceEventHandlerFuncs and podInformer stand in for client-go's
// shared informer plumbing.
type ResourceEventHandlerFuncs struct{ DeleteFunc func(obj interface{}) }

type podInformer struct{ handlers []ResourceEventHandlerFuncs }

func (i *podInformer) AddEventHandler(h ResourceEventHandlerFuncs) {
	i.handlers = append(i.handlers, h)
}

func (i *podInformer) deliverDelete(obj interface{}) {
	for _, h := range i.handlers {
		h.DeleteFunc(obj)
	}
}

func NewSoftReservationStore(informer *podInformer) *SoftReservationStore {
	s := &SoftReservationStore{store: make(map[string]*SoftReservation)}
	informer.AddEventHandler(ResourceEventHandlerFuncs{DeleteFunc: s.onPodDeletion})
	return s
}

// GetSoftReservation returns a copy of the SoftReservation tied to an
// application if it exists.
func (s *SoftReservationStore) GetSoftReservation(appID string) (*SoftReservation, bool) {
	s.storeLock.RLock()
	defer s.storeLock.RUnlock()
	appSoftReservation, ok := s.store[appID]
	if !ok {
		return &SoftReservation{}, ok
	}
	return s.deepCopySoftReservation(appSoftReservation), ok
}

func (s *SoftReservationStore) AddReservationForPod(ctx context.Context, appID, podName string, r Reservation) error {
	s.storeLock.Lock()
	defer s.storeLock.Unlock()
	sr, ok := s.store[appID]
	if !ok {
		sr = &SoftReservation{Reservations: map[string]Reservation{}, Status: map[string]bool{}}
		s.store[appID] = sr
	}
	sr.Reservations[podName], sr.Status[podName] = r, true
	return nil
}

// ExecutorHasSoftReservation returns true when the passed executor pod
// currently has a SoftReservation, false otherwise.
func (s *SoftReservationStore) ExecutorHasSoftReservation(ctx context.Context, executor *Pod) bool {
	s.storeLock.RLock()
	defer s.storeLock.RUnlock()
	appID, ok := executor.Labels[SparkAppIDLabel]
	if !ok {
		return false
	}
	time.Sleep(50 * time.Millisecond) // the extender is descheduled here
	if sr, ok := s.store[appID]; ok {
		_, ok := sr.Reservations[executor.Name]
		return ok
	}
	return false
}

func (s *SoftReservationStore) onPodDeletion(obj interface{}) {
	pod, ok := obj.(*Pod)
	if !ok {
		return
	}
	switch appID := pod.Labels[SparkAppIDLabel]; pod.Labels[SparkRoleLabel] {
	case Driver:
		s.removeDriverReservation(appID)
	case Executor:
		s.removeExecutorReservation(appID, pod.Name)
	}
}

func (s *SoftReservationStore) removeExecutorReservation(appID string, executorName string) {
	s.storeLock.Lock()
	defer s.storeLock.Unlock()
	if sr, found := s.store[appID]; found {
		delete(sr.Reservations, executorName)
		sr.Status[executorName] = false
	}
}

func (s *SoftReservationStore) removeDriverReservation(appID string) {
	s.storeLock.Lock()
	defer s.storeLock.Unlock()
	delete(s.store, appID)
}

func (s *SoftReservationStore) deepCopySoftReservation(r *SoftReservation) *SoftReservation {
	c := &SoftReservation{Reservations: map[string]Reservation{}, Status: map[string]bool{}}
	for k, v := range r.Reservations {
		c.Reservations[k] = v
	}
	maps.Copy(c.Status, r.Status)
	return c
}

// OverheadComputer sums the resources of pods without reservations.
type OverheadComputer struct {
	pods                 []*Pod
	softReservationStore *SoftReservationStore
}

func (o *OverheadComputer) compute(ctx context.Context) int {
	overhead := 0
	for _, p := range o.pods {
		if role, ok := p.Labels[SparkRoleLabel]; ok {
			if role == Executor && o.softReservationStore.ExecutorHasSoftReservation(ctx, p) {
				continue
			}
		}
		if p.NodeName != "" {
			overhead++
		}
	}
	return overhead
}

func main() {
	ctx := context.Background()
	informer := &podInformer{}
	store := NewSoftReservationStore(informer)
	exec := &Pod{Name: "app-1-exec-3", NodeName: "node-a", Labels: map[string]string{SparkRoleLabel: Executor, SparkAppIDLabel: "app-1"}}
	_ = store.AddReservationForPod(ctx, "app-1", exec.Name, Reservation{Node: "node-a", CPU: 2, Memory: 4096})
	oc := &OverheadComputer{pods: []*Pod{exec}, softReservationStore: store}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		fmt.Println("overhead:", oc.compute(ctx))
	}()
	time.Sleep(20 * time.Millisecond)
	go func() { // the executor pod is deleted
		defer wg.Done()
		informer.deliverDelete(exec)
	}()
	wg.Wait()
}
