// Project: hashicorp/nomad (client/taskenv/env.go, client/allocrunner/groupservice_hook.go), v0.10.4 (2020).
// Bug: Builder.UpdateTask takes b.mu and calls setAlloc, which for a group with Consul Connect upstreams calls the
// exported SetUpstreams, which takes b.mu again; an in-place alloc update through groupServiceHook.Update hangs the alloc runner.
package main

import (
	"fmt"
	"strconv"
	"sync"
)

type ConsulUpstream struct {
	DestinationName string
	LocalBindPort   int
}

type ConsulProxy struct{ Upstreams []ConsulUpstream }
type ConsulSidecarService struct{ Proxy *ConsulProxy }

func (s *ConsulSidecarService) HasUpstreams() bool {
	return s.Proxy != nil && len(s.Proxy.Upstreams) > 0
}

type ConsulConnect struct{ SidecarService *ConsulSidecarService }

func (c *ConsulConnect) HasSidecar() bool { return c != nil && c.SidecarService != nil }

type Service struct {
	Name    string
	Connect *ConsulConnect
}

type TaskGroup struct {
	Name     string
	Services []*Service
}

type Job struct {
	Name       string
	TaskGroups []*TaskGroup
}

func (j *Job) LookupTaskGroup(name string) *TaskGroup {
	for _, tg := range j.TaskGroups {
		if tg.Name == name {
			return tg
		}
	}
	return nil
}

type Allocation struct {
	ID        string
	TaskGroup string
	Job       *Job
}

type Task struct{ Name string }

// Builder is used to build task environment's and is safe for concurrent use.
type Builder struct {
	taskName  string
	allocId   string
	groupName string
	jobName   string
	upstreams []ConsulUpstream
	mu        *sync.RWMutex
}

func NewBuilder(alloc *Allocation, task *Task) *Builder {
	b := &Builder{mu: &sync.RWMutex{}}
	return b.setTask(task).setAlloc(alloc)
}

// Build must be called after all the tasks environment values have been set.
func (b *Builder) Build() map[string]string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	env := map[string]string{"NOMAD_ALLOC_ID": b.allocId, "NOMAD_JOB_NAME": b.jobName}
	for _, u := range b.upstreams {
		env["NOMAD_UPSTREAM_ADDR_"+u.DestinationName] = "127.0.0.1:" + strconv.Itoa(u.LocalBindPort)
	}
	return env
}

// UpdateTask updates the environment based on a new alloc and task.
func (b *Builder) UpdateTask(alloc *Allocation, task *Task) *Builder {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.setTask(task).setAlloc(alloc)
}

func (b *Builder) setTask(task *Task) *Builder {
	if task == nil {
		return b
	}
	b.taskName = task.Name
	return b
}

func (b *Builder) setAlloc(alloc *Allocation) *Builder {
	b.allocId = alloc.ID
	b.groupName = alloc.TaskGroup
	b.jobName = alloc.Job.Name
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)

	upstreams := []ConsulUpstream{}
	for _, svc := range tg.Services {
		if svc.Connect.HasSidecar() && svc.Connect.SidecarService.HasUpstreams() {
			upstreams = append(upstreams, svc.Connect.SidecarService.Proxy.Upstreams...)
		}
	}
	if len(upstreams) > 0 {
		b.setUpstreamsLocked(upstreams)
	}
	return b
}

// SetUpstreams defined by connect enabled group services
func (b *Builder) SetUpstreams(upstreams []ConsulUpstream) *Builder {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.setUpstreamsLocked(upstreams)
}

func (b *Builder) setUpstreamsLocked(upstreams []ConsulUpstream) *Builder {
	b.upstreams = upstreams
	return b
}

type RunnerUpdateRequest struct{ Alloc *Allocation }

type RunnerUpdateHook interface {
	Update(*RunnerUpdateRequest) error
}

type groupServiceHook struct {
	group          string
	services       []*Service
	taskEnvBuilder *Builder
	prerun         bool
	mu             sync.Mutex
}

func (h *groupServiceHook) Update(req *RunnerUpdateRequest) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.services = req.Alloc.Job.LookupTaskGroup(h.group).Services
	h.taskEnvBuilder.UpdateTask(req.Alloc, nil)
	if !h.prerun {
		return nil
	}
	fmt.Println("consul: update workload", h.taskEnvBuilder.Build())
	return nil
}

type allocRunner struct{ runnerHooks []interface{} }

// update runs the alloc runner update hooks for an in-place alloc update.
func (ar *allocRunner) update(alloc *Allocation) {
	for _, hook := range ar.runnerHooks {
		if h, ok := hook.(RunnerUpdateHook); ok {
			h.Update(&RunnerUpdateRequest{Alloc: alloc})
		}
	}
}

func connectJob(upstreams ...string) *Job {
	svc := &Service{Name: "web", Connect: &ConsulConnect{SidecarService: &ConsulSidecarService{Proxy: &ConsulProxy{}}}}
	for i, u := range upstreams {
		svc.Connect.SidecarService.Proxy.Upstreams = append(svc.Connect.SidecarService.Proxy.Upstreams, ConsulUpstream{u, 8080 + i})
	}
	return &Job{Name: "countdash", TaskGroups: []*TaskGroup{{Name: "dashboard", Services: []*Service{svc}}}}
}

func main() {
	alloc := &Allocation{ID: "a1", TaskGroup: "dashboard", Job: connectJob("count-api")}
	b := NewBuilder(alloc, &Task{Name: "dashboard"})
	h := &groupServiceHook{group: alloc.TaskGroup, taskEnvBuilder: b, prerun: true}
	ar := &allocRunner{runnerHooks: []interface{}{h}}
	fmt.Println("initial env", b.Build())

	// The job is updated in place (new upstream), so the client updates the alloc runner.
	ar.update(&Allocation{ID: "a1", TaskGroup: "dashboard", Job: connectJob("count-api", "cache")})
	fmt.Println("updated")
}
