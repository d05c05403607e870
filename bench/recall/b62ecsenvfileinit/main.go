// aws/amazon-ecs-agent #2569 / #2580 ("Fix a deadlock scenario in envfiles
// usage"): when the agent restarts and restores its state file, every task
// resource is re-initialized. EnvironmentFileResource.Initialize holds its
// own lock (deferred unlock) and, for a task that had not reached CREATED
// yet, resets the resource status through the exported SetKnownStatus, which
// takes the same lock again. The agent's state sync never returns.
package main

import (
	"fmt"
	"sync"
)

type TaskStatus int

const (
	TaskStatusNone TaskStatus = iota
	TaskManifestPulled
	TaskPulled
	TaskCreated
	TaskRunning
	TaskStopped
)

type ResourceStatus int

const (
	ResourceStatusNone ResourceStatus = iota
	ResourceCreated
)

type ResourceFields struct{ CredentialsManager string }

// TaskResource is the interface every task resource implements.
type TaskResource interface {
	GetName() string
	Initialize(fields *ResourceFields, taskKnown, taskDesired TaskStatus)
	SetKnownStatus(ResourceStatus)
	GetKnownStatus() ResourceStatus
}

type EnvironmentFileResource struct {
	taskARN             string
	credentialsManager  string
	statusToTransitions map[ResourceStatus]func() error
	knownStatusUnsafe   ResourceStatus
	appliedStatusUnsafe ResourceStatus
	lock                sync.RWMutex
}

func (envfile *EnvironmentFileResource) GetName() string { return "envfile" }

func (envfile *EnvironmentFileResource) initStatusToTransition() {
	envfile.statusToTransitions = map[ResourceStatus]func() error{ResourceCreated: func() error { return nil }}
}

// Initialize initializes the EnvironmentFileResource after a restore.
func (envfile *EnvironmentFileResource) Initialize(fields *ResourceFields, taskKnown, taskDesired TaskStatus) {
	envfile.lock.Lock()
	defer envfile.lock.Unlock()

	envfile.initStatusToTransition()
	envfile.credentialsManager = fields.CredentialsManager

	// if task isn't in 'created' status and desired status is 'running',
	// reset the resource status to 'NONE' so we always retrieve the data
	if taskKnown < TaskCreated && taskDesired <= TaskRunning {
		envfile.SetKnownStatus(ResourceStatusNone)
	}
}

// SetKnownStatus safely sets the currently known status of the resource.
func (envfile *EnvironmentFileResource) SetKnownStatus(status ResourceStatus) {
	envfile.lock.Lock()
	defer envfile.lock.Unlock()
	envfile.knownStatusUnsafe = status
	if envfile.appliedStatusUnsafe <= status {
		envfile.appliedStatusUnsafe = ResourceStatusNone
	}
}

func (envfile *EnvironmentFileResource) GetKnownStatus() ResourceStatus {
	envfile.lock.RLock()
	defer envfile.lock.RUnlock()
	return envfile.knownStatusUnsafe
}

// CgroupResource restores without touching its status.
type CgroupResource struct {
	lock        sync.RWMutex
	knownStatus ResourceStatus
	cgroupRoot  string
}

func (c *CgroupResource) GetName() string { return "cgroup" }
func (c *CgroupResource) Initialize(fields *ResourceFields, _, _ TaskStatus) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.cgroupRoot = "/ecs/" + fields.CredentialsManager
}
func (c *CgroupResource) SetKnownStatus(s ResourceStatus) {
	c.lock.Lock()
	c.knownStatus = s
	c.lock.Unlock()
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

func (task *Task) InitializeResources(fields *ResourceFields) {
	task.lock.Lock()
	defer task.lock.Unlock()
	for _, resources := range task.ResourcesMapUnsafe {
		for _, resource := range resources {
			resource.Initialize(fields, task.KnownStatusUnsafe, task.DesiredStatusUnsafe)
		}
	}
}

type DockerTaskEngine struct {
	tasks          []*Task // restored from the agent's data file
	resourceFields *ResourceFields
}

// synchronizeState re-attaches the engine to the tasks found in the state file.
func (engine *DockerTaskEngine) synchronizeState() {
	for _, task := range engine.tasks {
		task.InitializeResources(engine.resourceFields)
		fmt.Printf("restored %s (known=%d)\n", task.Arn, task.KnownStatusUnsafe)
	}
}

func newTask(arn string, known TaskStatus) *Task {
	return &Task{Arn: arn, KnownStatusUnsafe: known, DesiredStatusUnsafe: TaskRunning,
		ResourcesMapUnsafe: map[string][]TaskResource{
			"cgroup":  {&CgroupResource{knownStatus: ResourceCreated}},
			"envfile": {&EnvironmentFileResource{taskARN: arn, knownStatusUnsafe: ResourceCreated}},
		}}
}

func main() {
	engine := &DockerTaskEngine{resourceFields: &ResourceFields{CredentialsManager: "creds"}, tasks: []*Task{
		newTask("arn:aws:ecs:us-west-2:1:task/web/0a1b", TaskRunning),
		newTask("arn:aws:ecs:us-west-2:1:task/web/9f8e", TaskPulled), // agent restarted mid-start
	}}
	engine.synchronizeState()
	for _, t := range engine.tasks {
		fmt.Printf("%s envfile status %d\n", t.Arn, t.ResourcesMapUnsafe["envfile"][0].GetKnownStatus())
	}
}
