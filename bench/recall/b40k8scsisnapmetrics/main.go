// Project: kubernetes-csi/external-snapshotter (Kubernetes SIG Storage), pkg/metrics/metrics.go
// (operationMetricsManager) as driven by pkg/common-controller/snapshot_controller.go,
// snapshot-controller v4.2.0, the release that added the cancel metric.
// Issue: kubernetes-csi/external-snapshotter#580 "v4.2.0 snapshot-controller stops working
// after a while"; fixed by PR #581 (v4.2.1: #583) "Fix deadlock in recursive metric locks":
// "RecordMetrics() grabs a mutex and calls recordCancelMetric(),
// which wants to grab the same mutex. Go mutexes are not recursive, so recordCancelMetric
// blocks forever."
//
// The controller reports operation latencies through the MetricsManager interface.
// RecordMetrics locks opMgr.mu (line 101); when it records the end of a DeleteSnapshot
// operation it looks for a CreateSnapshot operation still pending for the same
// VolumeSnapshot and, if found, records a "cancel" metric through recordCancelMetric,
// which locks opMgr.mu again (line 133). Deleting a VolumeSnapshot before it became
// ready therefore hangs the controller's worker, and every other OperationStart after it.
// main creates a VolumeSnapshot whose creation is still in flight and then deletes it.
package main

import (
	"fmt"
	"sync"
	"time"
)

type UID string

const (
	CreateSnapshotOperationName = "CreateSnapshot"
	DeleteSnapshotOperationName = "DeleteSnapshot"

	SnapshotStatusTypeSuccess = "success"
	SnapshotStatusTypeCancel  = "cancel"
)

type OperationKey struct {
	Name       string
	ResourceID UID
}

func NewOperationKey(name string, snapshotUID UID) OperationKey {
	return OperationKey{Name: name, ResourceID: snapshotUID}
}

type OperationValue struct {
	Driver       string
	SnapshotType string
	startTime    time.Time
}

func NewOperationValue(driver, snapshotType string) OperationValue {
	return OperationValue{Driver: driver, SnapshotType: snapshotType}
}

type OperationStatus interface{ String() string }

type operationStatus string

func (s operationStatus) String() string { return string(s) }

type MetricsManager interface {
	OperationStart(op OperationKey, val OperationValue)
	DropOperation(op OperationKey)
	RecordMetrics(op OperationKey, status OperationStatus, driverName string)
}

// histogramVec stands for the k8s.io/component-base/metrics HistogramVec.
type histogramVec struct{ observed map[string]int }

func (h *histogramVec) Observe(labels ...string) { h.observed[fmt.Sprint(labels)]++ }

type operationMetricsManager struct {
	// cache stores start timestamps for all ongoing operations.
	cache            map[OperationKey]OperationValue
	mu               sync.Mutex
	opLatencyMetrics *histogramVec
}

func NewMetricsManager() MetricsManager {
	return &operationMetricsManager{
		cache:            map[OperationKey]OperationValue{},
		opLatencyMetrics: &histogramVec{observed: map[string]int{}},
	}
}

func (opMgr *operationMetricsManager) OperationStart(key OperationKey, val OperationValue) {
	opMgr.mu.Lock()
	defer opMgr.mu.Unlock()
	if _, exists := opMgr.cache[key]; !exists {
		val.startTime = time.Now()
		opMgr.cache[key] = val
	}
}

func (opMgr *operationMetricsManager) DropOperation(op OperationKey) {
	opMgr.mu.Lock()
	defer opMgr.mu.Unlock()
	delete(opMgr.cache, op)
}

func (opMgr *operationMetricsManager) RecordMetrics(opKey OperationKey, opStatus OperationStatus, driverName string) {
	opMgr.mu.Lock()
	defer opMgr.mu.Unlock()
	opVal, exists := opMgr.cache[opKey]
	if !exists {
		// the operation has not been cached, return directly
		return
	}
	status := "unknown"
	if opStatus != nil {
		status = opStatus.String()
	}
	if driverName == "" {
		driverName = opVal.Driver
	}
	operationDuration := time.Since(opVal.startTime).Seconds()
	opMgr.opLatencyMetrics.Observe(driverName, opKey.Name, opVal.SnapshotType, status)

	// Report cancel metrics if we are deleting an unfinished VolumeSnapshot
	if opKey.Name == DeleteSnapshotOperationName {
		// check if we have a CreateSnapshot operation pending for this
		createKey := NewOperationKey(CreateSnapshotOperationName, opKey.ResourceID)
		obj, exists := opMgr.cache[createKey]
		if exists {
			// record a cancel metric if found
			opMgr.recordCancelMetric(obj, createKey, operationDuration)
		}
	}
	delete(opMgr.cache, opKey)
}

// recordCancelMetric records a metric for a create operation that hasn't finished
func (opMgr *operationMetricsManager) recordCancelMetric(val OperationValue, key OperationKey, duration float64) {
	opMgr.mu.Lock()
	defer opMgr.mu.Unlock()
	opMgr.opLatencyMetrics.Observe(val.Driver, key.Name, val.SnapshotType, SnapshotStatusTypeCancel)
	delete(opMgr.cache, key)
}

// ---- pkg/common-controller ----

type VolumeSnapshot struct {
	UID               UID
	Name              string
	ReadyToUse        bool
	DeletionRequested bool
}

type csiSnapshotCommonController struct {
	metricsManager MetricsManager
	queue          chan *VolumeSnapshot
}

func (ctrl *csiSnapshotCommonController) syncSnapshot(snapshot *VolumeSnapshot) {
	driverName := "hostpath.csi.k8s.io"
	if snapshot.DeletionRequested {
		deleteKey := NewOperationKey(DeleteSnapshotOperationName, snapshot.UID)
		ctrl.metricsManager.OperationStart(deleteKey, NewOperationValue(driverName, "dynamic"))
		// ... finalizers removed, the VolumeSnapshotContent is gone ...
		ctrl.metricsManager.RecordMetrics(deleteKey, operationStatus(SnapshotStatusTypeSuccess), driverName)
		return
	}
	if !snapshot.ReadyToUse {
		createKey := NewOperationKey(CreateSnapshotOperationName, snapshot.UID)
		ctrl.metricsManager.OperationStart(createKey, NewOperationValue(driverName, "dynamic"))
	}
}

func (ctrl *csiSnapshotCommonController) snapshotWorker(done chan<- struct{}) {
	for snapshot := range ctrl.queue {
		ctrl.syncSnapshot(snapshot)
		fmt.Println("synced", snapshot.Name, "deleting:", snapshot.DeletionRequested)
	}
	close(done)
}

func main() {
	ctrl := &csiSnapshotCommonController{metricsManager: NewMetricsManager(), queue: make(chan *VolumeSnapshot)}
	done := make(chan struct{})
	go ctrl.snapshotWorker(done)

	ctrl.queue <- &VolumeSnapshot{UID: "4f1c", Name: "db-snap"} // cutting the snapshot takes a while
	ctrl.queue <- &VolumeSnapshot{UID: "4f1c", Name: "db-snap", DeletionRequested: true}
	close(ctrl.queue)
	<-done
}
