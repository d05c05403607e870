// Fixed version (PR #1322 applied).
// Project: kubernetes-sigs/vsphere-csi-driver, v2.4 development (Oct 2021).
// Files: pkg/common/cns-lib/volume/manager.go (defaultManager.CreateVolume,
// createVolume, getPendingCreateVolumeTaskFromMap, invokeCNSCreateVolume,
// validateCreateVolumeResponseFault; package-level volumeTaskMap and
// volumeTaskMapLock).
// Fix: kubernetes-sigs/vsphere-csi-driver PR #1322 "fix volumeTaskMapLock
// deadlock" (regression from commit 7f79bdc, which added the lock).
//
// Without the improved-idempotency feature gate, createVolume remembers the
// CNS CreateVolume task of every in-flight PVC in volumeTaskMap so that a
// retried CreateVolume call from the external-provisioner reuses the task.
// Commit 7f79bdc protected the map with volumeTaskMapLock, but stored the
// new task with `volumeTaskMapLock.Lock(); defer volumeTaskMapLock.Unlock()`
// in the middle of createVolume, so the lock stayed held until createVolume
// returned. When CNS reports a fault for the new task, the error path removes
// the task from the map so the next retry creates the volume again, and it
// locks volumeTaskMapLock a second time: the controller's CreateVolume RPC
// hangs forever and the PVC is never provisioned. The fix wraps every map
// access in an anonymous function so the deferred unlock runs right after
// the update.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type ManagedObjectReference struct{ Type, Value string }

type Task struct{ ref ManagedObjectReference }

func (t *Task) Reference() ManagedObjectReference { return t.ref }

type CnsFault struct{ LocalizedMessage string }

type CnsVolumeOperationResult struct {
	VolumeId string
	Fault    *CnsFault
}

type TaskInfo struct {
	Task         ManagedObjectReference
	ActivationId string
	Result       *CnsVolumeOperationResult
}

type CnsVolumeCreateSpec struct{ Name, Datastore string }

type CnsVolumeInfo struct{ DatastoreURL, VolumeID string }

type createVolumeTaskDetails struct {
	task           *Task
	expirationTime time.Time
}

var (
	// volumeTaskMap stores CreateVolume tasks of in-flight volumes.
	volumeTaskMap     = make(map[string]*createVolumeTaskDetails)
	volumeTaskMapLock = &sync.Mutex{}
)

const defaultOpsExpirationTimeInHours = 1

// fake CNS endpoint of vCenter
type cnsClient struct{}

func (cnsClient) CreateVolume(ctx context.Context, specs []CnsVolumeCreateSpec) (*Task, error) {
	return &Task{ref: ManagedObjectReference{Type: "Task", Value: "task-1042"}}, nil
}

func (cnsClient) GetTaskInfo(ctx context.Context, task *Task) (*TaskInfo, error) {
	return &TaskInfo{Task: task.Reference(), ActivationId: "op-393f3fd6", Result: &CnsVolumeOperationResult{
		Fault: &CnsFault{LocalizedMessage: "Failed to create volume: storage policy not compatible"},
	}}, nil
}

type defaultManager struct{ cns cnsClient }

func (m *defaultManager) CreateVolume(ctx context.Context, spec *CnsVolumeCreateSpec) (*CnsVolumeInfo, string, error) {
	internalCreateVolume := func() (*CnsVolumeInfo, string, error) {
		return m.createVolume(ctx, spec)
	}
	start := time.Now()
	resp, faultType, err := internalCreateVolume()
	fmt.Printf("internalCreateVolume: returns fault %q after %v\n", faultType, time.Since(start).Round(time.Millisecond))
	return resp, faultType, err
}

func (m *defaultManager) createVolume(ctx context.Context, spec *CnsVolumeCreateSpec) (*CnsVolumeInfo, string, error) {
	volNameFromInputSpec := spec.Name
	task := getPendingCreateVolumeTaskFromMap(ctx, volNameFromInputSpec)
	if task == nil {
		var err error
		task, err = invokeCNSCreateVolume(ctx, m.cns, spec)
		if err != nil {
			return nil, "csi.fault.Internal", err
		}
		var taskDetails createVolumeTaskDetails
		taskDetails.task = task
		taskDetails.expirationTime = time.Now().Add(time.Hour * time.Duration(defaultOpsExpirationTimeInHours))
		func() {
			volumeTaskMapLock.Lock()
			defer volumeTaskMapLock.Unlock()
			volumeTaskMap[volNameFromInputSpec] = &taskDetails
		}()
	}

	taskInfo, err := m.cns.GetTaskInfo(ctx, task)
	if err != nil || taskInfo == nil {
		return nil, "csi.fault.TaskInfoEmpty", err
	}
	fmt.Printf("CreateVolume: VolumeName: %q, opId: %q\n", volNameFromInputSpec, taskInfo.ActivationId)
	volumeOperationRes := taskInfo.Result
	if volumeOperationRes.Fault != nil {
		resp, err := validateCreateVolumeResponseFault(ctx, volNameFromInputSpec, volumeOperationRes)
		if err != nil {
			// Remove the taskInfo object associated with the volume name when the
			// current task fails, so the next CreateVolume call invokes CNS again.
			_, ok := volumeTaskMap[volNameFromInputSpec]
			if ok {
				func() {
					volumeTaskMapLock.Lock()
					defer volumeTaskMapLock.Unlock()
					delete(volumeTaskMap, volNameFromInputSpec)
				}()
			}
		}
		return resp, "csi.fault.CnsFault", err
	}
	return &CnsVolumeInfo{VolumeID: volumeOperationRes.VolumeId}, "", nil
}

func getPendingCreateVolumeTaskFromMap(ctx context.Context, volNameFromInputSpec string) *Task {
	volumeTaskMapLock.Lock()
	defer volumeTaskMapLock.Unlock()
	if taskDetails, ok := volumeTaskMap[volNameFromInputSpec]; ok {
		return taskDetails.task
	}
	return nil
}

func invokeCNSCreateVolume(ctx context.Context, cns cnsClient, spec *CnsVolumeCreateSpec) (*Task, error) {
	return cns.CreateVolume(ctx, []CnsVolumeCreateSpec{*spec})
}

func validateCreateVolumeResponseFault(ctx context.Context, name string, res *CnsVolumeOperationResult) (*CnsVolumeInfo, error) {
	return nil, errors.New(res.Fault.LocalizedMessage)
}

func main() {
	m := &defaultManager{}
	spec := &CnsVolumeCreateSpec{Name: "pvc-d179b06d-e333-485c-985b-f88d8bd4e056", Datastore: "vsanDatastore"}
	for attempt := 1; attempt <= 2; attempt++ { // external-provisioner retries
		_, _, err := m.CreateVolume(context.Background(), spec)
		fmt.Printf("attempt %d: %v\n", attempt, err)
	}
}
