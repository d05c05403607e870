// Project: kubernetes-sigs/cluster-autoscaler (formerly kubernetes/autoscaler),
// 2026, after the notifier list got its own mutex (kubernetes/autoscaler #9136).
// Files: observers/nodegroupchange/scale_state_observer.go (NodeGroupChange-
// ObserversList.RegisterScaleDown, RegisterFailedScaleUp), clusterstate/
// clusterstate.go (ClusterStateRegistry.UpdateNodes, handleInstanceCreation-
// Errors, RegisterScaleDown), core/scaledown/actuation (deleteNodesAsync).
// Fix: kubernetes-sigs/cluster-autoscaler PR #81 "Update mutex lock/unlock
// mechanism in NodeGroupChangeObserversList".
//
// The ClusterStateRegistry (CSR) is itself one of the observers registered on
// the NodeGroupChangeObserversList. The list held its mutex while it called
// every observer, so a background scale-down goroutine reporting a deleted
// node took list.mutex and then, inside CSR.RegisterScaleDown, the CSR mutex.
// The main autoscaler loop does the opposite: CSR.UpdateNodes holds the CSR
// mutex, and handleInstanceCreationErrors reports failed scale-ups through the
// same notifier list, which needs list.mutex. With a node deletion in flight
// while the main loop updates the cluster state, the two goroutines block on
// each other and the autoscaler freezes until its liveness probe kills it.
// The fix turns the list mutex into an RWMutex and has every Register* method
// copy the observers under the read lock and release it before calling them.
package main

import (
	"fmt"
	"sync"
	"time"
)

type NodeGroup interface {
	Id() string
	Nodes() ([]Instance, error)
}

type InstanceErrorInfo struct{ ErrorCode, ErrorMessage string }
type Instance struct {
	Id        string
	ErrorInfo *InstanceErrorInfo
}

// fakeNodeGroup answers like a cloud provider would, with some API latency.
type fakeNodeGroup struct{ id string }

func (g *fakeNodeGroup) Id() string { return g.id }
func (g *fakeNodeGroup) Nodes() ([]Instance, error) {
	time.Sleep(100 * time.Millisecond)
	return []Instance{{Id: g.id + "-1", ErrorInfo: &InstanceErrorInfo{ErrorCode: "QUOTA_EXCEEDED"}}}, nil
}

type NodeGroupChangeObserver interface {
	RegisterScaleUp(nodeGroup NodeGroup, delta int, currentTime time.Time)
	RegisterScaleDown(nodeGroup NodeGroup, nodeName string, currentTime, expectedDeleteTime time.Time)
	RegisterFailedScaleUp(nodeGroup NodeGroup, reason, errorMessage string, currentTime time.Time)
}

type NodeGroupChangeObserversList struct {
	observers []NodeGroupChangeObserver
	mutex     sync.Mutex
}

func (l *NodeGroupChangeObserversList) Register(o NodeGroupChangeObserver) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	l.observers = append(l.observers, o)
}

func (l *NodeGroupChangeObserversList) RegisterScaleUp(nodeGroup NodeGroup, delta int, currentTime time.Time) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	for _, observer := range l.observers {
		observer.RegisterScaleUp(nodeGroup, delta, currentTime)
	}
}

func (l *NodeGroupChangeObserversList) RegisterScaleDown(nodeGroup NodeGroup, nodeName string, currentTime, expectedDeleteTime time.Time) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	for _, observer := range l.observers {
		observer.RegisterScaleDown(nodeGroup, nodeName, currentTime, expectedDeleteTime)
	}
}

func (l *NodeGroupChangeObserversList) RegisterFailedScaleUp(nodeGroup NodeGroup, reason, errorMessage string, currentTime time.Time) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	for _, observer := range l.observers {
		observer.RegisterFailedScaleUp(nodeGroup, reason, errorMessage, currentTime)
	}
}

type ScaleDownRequest struct {
	NodeGroup                NodeGroup
	NodeName                 string
	Time, ExpectedDeleteTime time.Time
}

type ClusterStateRegistry struct {
	sync.Mutex
	nodeGroups         []NodeGroup
	scaleDownRequests  []*ScaleDownRequest
	scaleStateNotifier NodeGroupChangeObserver

	scaleUpFailuresLock sync.Mutex
	scaleUpFailures     map[string][]string
}

func (csr *ClusterStateRegistry) RegisterScaleUp(nodeGroup NodeGroup, delta int, currentTime time.Time) {
	csr.Lock()
	defer csr.Unlock()
}

func (csr *ClusterStateRegistry) RegisterScaleDown(nodeGroup NodeGroup, nodeName string, currentTime, expectedDeleteTime time.Time) {
	csr.Lock()
	defer csr.Unlock()
	csr.scaleDownRequests = append(csr.scaleDownRequests, &ScaleDownRequest{
		NodeGroup: nodeGroup, NodeName: nodeName, Time: currentTime, ExpectedDeleteTime: expectedDeleteTime,
	})
}

// RegisterFailedScaleUp only touches the scale-up failures, which have their own lock.
func (csr *ClusterStateRegistry) RegisterFailedScaleUp(nodeGroup NodeGroup, reason, errorMessage string, currentTime time.Time) {
	csr.scaleUpFailuresLock.Lock()
	defer csr.scaleUpFailuresLock.Unlock()
	csr.scaleUpFailures[nodeGroup.Id()] = append(csr.scaleUpFailures[nodeGroup.Id()], reason)
}

// UpdateNodes is called by the main loop in every RunOnce iteration.
func (csr *ClusterStateRegistry) UpdateNodes(currentTime time.Time) error {
	csr.Lock()
	defer csr.Unlock()
	csr.handleInstanceCreationErrors(currentTime)
	return nil
}

func (csr *ClusterStateRegistry) handleInstanceCreationErrors(currentTime time.Time) {
	for _, nodeGroup := range csr.nodeGroups {
		instances, _ := nodeGroup.Nodes()
		for _, instance := range instances {
			if instance.ErrorInfo != nil {
				csr.scaleStateNotifier.RegisterFailedScaleUp(nodeGroup, instance.ErrorInfo.ErrorCode,
					instance.ErrorInfo.ErrorMessage, currentTime)
			}
		}
	}
}

// ScaleDownCandidatesDelayProcessor is the other registered observer.
type ScaleDownCandidatesDelayProcessor struct {
	mu         sync.Mutex
	scaleDowns map[string]time.Time
}

func (p *ScaleDownCandidatesDelayProcessor) RegisterScaleUp(NodeGroup, int, time.Time) {}
func (p *ScaleDownCandidatesDelayProcessor) RegisterFailedScaleUp(NodeGroup, string, string, time.Time) {
}
func (p *ScaleDownCandidatesDelayProcessor) RegisterScaleDown(ng NodeGroup, _ string, t, _ time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scaleDowns[ng.Id()] = t
}

type Actuator struct{ scaleStateNotifier NodeGroupChangeObserver }

// deleteNodesAsync runs in a background goroutine per deletion batch.
func (a *Actuator) deleteNodesAsync(nodeGroup NodeGroup, nodeNames []string, wg *sync.WaitGroup) {
	defer wg.Done()
	for _, name := range nodeNames {
		now := time.Now()
		a.scaleStateNotifier.RegisterScaleDown(nodeGroup, name, now, now.Add(time.Minute))
	}
}

func main() {
	notifier := &NodeGroupChangeObserversList{}
	ng := &fakeNodeGroup{id: "ng-1"}
	csr := &ClusterStateRegistry{
		nodeGroups:         []NodeGroup{ng},
		scaleStateNotifier: notifier,
		scaleUpFailures:    map[string][]string{},
	}
	notifier.Register(csr)
	notifier.Register(&ScaleDownCandidatesDelayProcessor{scaleDowns: map[string]time.Time{}})
	actuator := &Actuator{scaleStateNotifier: notifier}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // main autoscaler loop: RunOnce -> updateClusterState
		defer wg.Done()
		_ = csr.UpdateNodes(time.Now())
	}()
	go func() {
		time.Sleep(50 * time.Millisecond)
		actuator.deleteNodesAsync(ng, []string{"ng-1-node-a"}, &wg)
	}()
	wg.Wait()
	fmt.Println("scale-down requests:", len(csr.scaleDownRequests), "failures:", csr.scaleUpFailures)
}
