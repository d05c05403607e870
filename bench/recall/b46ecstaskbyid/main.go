// Project: aws/amazon-ecs-agent (the ECS container agent), mid 2015 (1.4.x).
// Files/functions: agent/engine/dockerstate/docker_task_engine_state.go
// (DockerTaskEngineState.TaskById, TaskByArn, AddOrUpdateTask, Lock),
// agent/engine/docker_task_engine.go (DockerTaskEngine.handleDockerEvents,
// DockerTaskEngine.AddTask).
// PR aws/amazon-ecs-agent#149 "Fix deadlock in DockerTaskEngineState"
// (July 2015).
//
// The task engine's docker event loop maps every docker event back to its
// task with state.TaskById. TaskById read-locks the state's RWMutex, looks
// up the task ARN for the container id and then calls the exported
// TaskByArn, which read-locks the same RWMutex again. When a task arrives
// from the ACS backend at the same time, AddTask calls
// state.AddOrUpdateTask, which write-locks the state; the writer waits for
// the event loop's first read lock and, because a pending writer blocks new
// readers, the nested RLock in TaskByArn waits for the writer. Neither can
// proceed and the agent stops processing events and tasks. The fix made
// TaskById call an unlocked helper taskByArn (and added the same
// locked/unlocked split for AllTasks).
package main

import (
	"fmt"
	"sync"
	"time"
)

type TaskStatus int

const (
	TaskStatusNone TaskStatus = iota
	TaskRunning
	TaskStopped
)

type Task struct {
	Arn           string
	DesiredStatus TaskStatus
}

type DockerContainer struct {
	DockerId string
	Name     string
}

type DockerTaskEngineState struct {
	lock sync.RWMutex

	tasks         map[string]*Task                       // taskarn -> api.Task
	idToTask      map[string]string                      // DockerId -> taskarn
	taskToId      map[string]map[string]*DockerContainer // taskarn -> (containername -> api.DockerContainer)
	idToContainer map[string]*DockerContainer            // DockerId -> api.DockerContainer
}

func NewDockerTaskEngineState() *DockerTaskEngineState {
	return &DockerTaskEngineState{
		tasks:         make(map[string]*Task),
		idToTask:      make(map[string]string),
		taskToId:      make(map[string]map[string]*DockerContainer),
		idToContainer: make(map[string]*DockerContainer),
	}
}

func (state *DockerTaskEngineState) ContainerById(id string) (*DockerContainer, bool) {
	state.lock.RLock()
	defer state.lock.RUnlock()

	c, ok := state.idToContainer[id]
	return c, ok
}

// TaskById retrieves the task of a given docker container id
func (state *DockerTaskEngineState) TaskById(cid string) (*Task, bool) {
	state.lock.RLock()
	defer state.lock.RUnlock()

	arn, found := state.idToTask[cid]
	if !found {
		return nil, false
	}
	time.Sleep(100 * time.Millisecond)
	return state.TaskByArn(arn)
}

// AddOrUpdateTask adds a new task to the state, and if it already exists
// updates the existing task to match the argument's DesiredStatus. This method
// *does* aquire a write lock.
func (state *DockerTaskEngineState) AddOrUpdateTask(task *Task) *Task {
	state.Lock()
	defer state.Unlock()

	current, exists := state.tasks[task.Arn]
	if !exists {
		state.tasks[task.Arn] = task
		return task
	}
	if task.DesiredStatus > current.DesiredStatus {
		current.DesiredStatus = task.DesiredStatus
	}
	return current
}

// Lock aquires the write lock for this state.
func (state *DockerTaskEngineState) Lock() {
	state.lock.Lock()
}

// Unlock releases the write lock for this state.
func (state *DockerTaskEngineState) Unlock() {
	state.lock.Unlock()
}

// AddContainer expects the caller to hold the write lock.
func (state *DockerTaskEngineState) AddContainer(container *DockerContainer, task *Task) {
	if _, exists := state.tasks[task.Arn]; !exists {
		state.tasks[task.Arn] = task
	}
	state.idToTask[container.DockerId] = task.Arn
	existingMap, exists := state.taskToId[task.Arn]
	if !exists {
		existingMap = make(map[string]*DockerContainer)
		state.taskToId[task.Arn] = existingMap
	}
	existingMap[container.Name] = container
	state.idToContainer[container.DockerId] = container
}

func (state *DockerTaskEngineState) TaskByArn(arn string) (*Task, bool) {
	state.lock.RLock()
	defer state.lock.RUnlock()

	t, ok := state.tasks[arn]
	return t, ok
}

type DockerContainerChangeEvent struct {
	DockerId string
	Status   string
}

type DockerTaskEngine struct {
	state  *DockerTaskEngineState
	events chan DockerContainerChangeEvent
}

// handleDockerEvents must be called after openEventstream; it processes each
// event that it reads from the docker eventstream.
func (engine *DockerTaskEngine) handleDockerEvents() {
	for event := range engine.events {
		task, taskFound := engine.state.TaskById(event.DockerId)
		cont, containerFound := engine.state.ContainerById(event.DockerId)
		if !taskFound || !containerFound {
			continue
		}
		fmt.Printf("event %s for container %s of task %s\n", event.Status, cont.Name, task.Arn)
	}
}

// AddTask starts tracking a task pushed by ACS.
func (engine *DockerTaskEngine) AddTask(task *Task) {
	existing := engine.state.AddOrUpdateTask(task)
	fmt.Println("tracking task", existing.Arn)
}

func main() {
	state := NewDockerTaskEngineState()
	web := &Task{Arn: "arn:aws:ecs:task/web", DesiredStatus: TaskRunning}
	state.Lock()
	state.AddContainer(&DockerContainer{DockerId: "c0ffee", Name: "web"}, web)
	state.Unlock()

	engine := &DockerTaskEngine{state: state, events: make(chan DockerContainerChangeEvent)}
	done := make(chan struct{})
	go func() {
		engine.handleDockerEvents()
		close(done)
	}()

	engine.events <- DockerContainerChangeEvent{DockerId: "c0ffee", Status: "die"}
	time.Sleep(30 * time.Millisecond)
	engine.AddTask(&Task{Arn: "arn:aws:ecs:task/worker", DesiredStatus: TaskRunning})
	close(engine.events)
	<-done
}
