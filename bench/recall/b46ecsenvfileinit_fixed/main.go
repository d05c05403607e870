// Project: aws/amazon-ecs-agent (the ECS container agent), mid-2020 releases
// with the environment-files feature (fix shipped in 1.44.x).
// Files/functions: agent/taskresource/envFiles/envfile.go
// (EnvironmentFileResource.Initialize, SetKnownStatus,
// updateAppliedStatusUnsafe), agent/api/task/task.go
// (Task.InitializeResources), agent/engine/docker_task_engine.go
// (DockerTaskEngine.synchronizeState).
// PR aws/amazon-ecs-agent#2569 "Fix a deadlock scenario in envfiles usage",
// merged as PR #2580 "Instamojo fix/envfiles deadlock" (August 2020).
//
// When the agent restarts it restores its state file and
// synchronizeState calls Task.InitializeResources for every task, which calls
// Initialize on each task resource through the taskresource.TaskResource
// interface. EnvironmentFileResource.Initialize takes envfile.lock with a
// deferred Unlock, re-creates its helpers and then, for a task that had not
// reached CREATED yet while its desired status is RUNNING, resets the
// resource status by calling the exported SetKnownStatus, which takes
// envfile.lock again. sync.RWMutex is not reentrant, so the restore
// goroutine blocks on itself and the agent never finishes starting. The fix
// unlocks envfile.lock right after the fields are set, before the
// SetKnownStatus call.
package main

import (
	"fmt"
	"sync"
	"time"
)

type TaskStatus int32

const (
	TaskStatusNone TaskStatus = iota
	TaskPulled
	TaskCreated
	TaskRunning
	TaskStopped
)

type ResourceStatus int32

const ResourceStatusNone ResourceStatus = 0

const EnvFileCreated ResourceStatus = 1

type ResourceFields struct {
	CredentialsManager string
}

// TaskResource is the interface every task resource implements
// (agent/taskresource/types.go).
type TaskResource interface {
	GetName() string
	Initialize(resourceFields *ResourceFields, taskKnownStatus TaskStatus, taskDesiredStatus TaskStatus)
	SetKnownStatus(status ResourceStatus)
	GetKnownStatus() ResourceStatus
}

type EnvironmentFileResource struct {
	taskARN            string
	credentialsManager string

	createdAtUnsafe     time.Time
	knownStatusUnsafe   ResourceStatus
	appliedStatusUnsafe ResourceStatus
	statusToTransitions map[ResourceStatus]func() error
	lock                sync.RWMutex
}

func (envfile *EnvironmentFileResource) GetName() string { return "envfile" }

func (envfile *EnvironmentFileResource) Initialize(resourceFields *ResourceFields,
	taskKnownStatus TaskStatus,
	taskDesiredStatus TaskStatus) {
	envfile.lock.Lock()

	envfile.initStatusToTransition()
	envfile.credentialsManager = resourceFields.CredentialsManager
	envfile.lock.Unlock()

	// if task isn't in 'created' status and desired status is 'running',
	// reset the resource status to 'NONE' so we always retrieve the data
	// this is in case agent crashes
	if taskKnownStatus < TaskCreated && taskDesiredStatus <= TaskRunning {
		envfile.SetKnownStatus(ResourceStatusNone)
	}
}

func (envfile *EnvironmentFileResource) initStatusToTransition() {
	envfile.statusToTransitions = map[ResourceStatus]func() error{
		EnvFileCreated: envfile.Create,
	}
}

func (envfile *EnvironmentFileResource) Create() error { return nil }

func (envfile *EnvironmentFileResource) updateAppliedStatusUnsafe(knownStatus ResourceStatus) {
	if envfile.appliedStatusUnsafe == ResourceStatusNone {
		return
	}
	if envfile.appliedStatusUnsafe <= knownStatus {
		envfile.appliedStatusUnsafe = ResourceStatusNone
	}
}

// SetKnownStatus safely sets the currently known status of the resource
func (envfile *EnvironmentFileResource) SetKnownStatus(status ResourceStatus) {
	envfile.lock.Lock()
	defer envfile.lock.Unlock()

	envfile.knownStatusUnsafe = status
	envfile.updateAppliedStatusUnsafe(status)
}

func (envfile *EnvironmentFileResource) GetKnownStatus() ResourceStatus {
	envfile.lock.RLock()
	defer envfile.lock.RUnlock()
	return envfile.knownStatusUnsafe
}

// CgroupResource stands in for the other resource kinds a task can carry.
type CgroupResource struct {
	lock        sync.RWMutex
	knownStatus ResourceStatus
}

func (c *CgroupResource) GetName() string { return "cgroup" }
func (c *CgroupResource) Initialize(*ResourceFields, TaskStatus, TaskStatus) {
	c.lock.Lock()
	defer c.lock.Unlock()
}
func (c *CgroupResource) SetKnownStatus(s ResourceStatus) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.knownStatus = s
}
func (c *CgroupResource) GetKnownStatus() ResourceStatus {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return c.knownStatus
}

type Task struct {
	Arn                 string
	KnownStatusUnsafe   TaskStatus
	DesiredStatusUnsafe TaskStatus
	ResourcesMapUnsafe  map[string][]TaskResource
	lock                sync.RWMutex
}

// InitializeResources initializes the required field in the task on agent restart
func (task *Task) InitializeResources(resourceFields *ResourceFields) {
	task.lock.Lock()
	defer task.lock.Unlock()
	for _, resources := range task.ResourcesMapUnsafe {
		for _, resource := range resources {
			resource.Initialize(resourceFields, task.KnownStatusUnsafe, task.DesiredStatusUnsafe)
		}
	}
}

type DockerTaskEngine struct {
	tasks          []*Task
	resourceFields *ResourceFields
}

// synchronizeState is called on agent start with the state loaded from disk.
func (engine *DockerTaskEngine) synchronizeState() {
	for _, task := range engine.tasks {
		task.InitializeResources(engine.resourceFields)
		fmt.Println("restored task", task.Arn)
	}
}

func main() {
	// A task that was still pulling when the agent was restarted.
	task := &Task{
		Arn:                 "arn:aws:ecs:us-west-2:123456789012:task/default/7c2f",
		KnownStatusUnsafe:   TaskPulled,
		DesiredStatusUnsafe: TaskRunning,
		ResourcesMapUnsafe: map[string][]TaskResource{
			"cgroup":  {&CgroupResource{}},
			"envfile": {&EnvironmentFileResource{taskARN: "7c2f", appliedStatusUnsafe: EnvFileCreated}},
		},
	}
	engine := &DockerTaskEngine{
		tasks:          []*Task{task},
		resourceFields: &ResourceFields{CredentialsManager: "credentials-manager"},
	}
	engine.synchronizeState()
	fmt.Println("agent started")
}
