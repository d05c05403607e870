// Project: volcano-sh/volcano (pkg/scheduler/cache)
// Bug: SchedulerCache.String() takes sc.Mutex to render the cache. The
//      failure path of AddBindTask, which already holds sc.Mutex, logs the
//      whole cache with klog.Errorf("...: %v", sc); fmt calls sc.String()
//      which locks sc.Mutex again on the same goroutine.
// Fix: log only the task/node identifiers on that path (never format the
//      cache itself while its mutex is held).

package b22volcanostring_fixed

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

type Resource struct{ MilliCPU, Memory float64 }

func (r *Resource) LessEqual(rr *Resource) bool {
	return r.MilliCPU <= rr.MilliCPU && r.Memory <= rr.Memory
}

func (r *Resource) Sub(rr *Resource) { r.MilliCPU -= rr.MilliCPU; r.Memory -= rr.Memory }

func (r *Resource) String() string {
	return fmt.Sprintf("cpu %0.2f, memory %0.2f", r.MilliCPU, r.Memory)
}

type TaskInfo struct {
	UID, Job, Name, Namespace, NodeName string
	Resreq                              *Resource
}

type NodeInfo struct {
	Name  string
	Idle  *Resource
	Used  *Resource
	Tasks map[string]*TaskInfo
}

func (ni *NodeInfo) AddTask(task *TaskInfo) error {
	if !task.Resreq.LessEqual(ni.Idle) {
		return fmt.Errorf("selected node NotReady: task %s/%s requests %v, idle %v",
			task.Namespace, task.Name, task.Resreq, ni.Idle)
	}
	ni.Idle.Sub(task.Resreq)
	ni.Tasks[task.UID] = task
	return nil
}

type JobInfo struct {
	UID   string
	Name  string
	Tasks map[string]*TaskInfo
}

type logger struct {
	mu  sync.Mutex
	out []string
}

func (l *logger) Errorf(format string, args ...interface{}) {
	msg := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.out = append(l.out, msg)
	l.mu.Unlock()
}

func (l *logger) Infof(format string, args ...interface{}) { l.Errorf(format, args...) }

var klog = &logger{}

type SchedulerCache struct {
	sync.Mutex
	schedulerName string
	Jobs          map[string]*JobInfo
	Nodes         map[string]*NodeInfo
	bindCache     []*TaskInfo
	errTasks      []string
}

func (sc *SchedulerCache) String() string {
	sc.Mutex.Lock()
	defer sc.Mutex.Unlock()
	var b strings.Builder
	b.WriteString("Cache:\n")
	if len(sc.Nodes) != 0 {
		b.WriteString("Nodes:\n")
		names := make([]string, 0, len(sc.Nodes))
		for n := range sc.Nodes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			ni := sc.Nodes[n]
			fmt.Fprintf(&b, "\t %s: idle(%v) used(%v) tasks(%d)\n", n, ni.Idle, ni.Used, len(ni.Tasks))
		}
	}
	if len(sc.Jobs) != 0 {
		b.WriteString("Jobs:\n")
		for _, job := range sc.Jobs {
			fmt.Fprintf(&b, "\t Job(%s) name(%s) tasks(%d)\n", job.UID, job.Name, len(job.Tasks))
		}
	}
	return b.String()
}

func (sc *SchedulerCache) findJobAndTask(taskInfo *TaskInfo) (*JobInfo, *TaskInfo, error) {
	job, found := sc.Jobs[taskInfo.Job]
	if !found {
		return nil, nil, fmt.Errorf("failed to find Job %v for Task %v", taskInfo.Job, taskInfo.UID)
	}
	task, found := job.Tasks[taskInfo.UID]
	if !found {
		return nil, nil, fmt.Errorf("failed to find task in status %v by id %v", job.Name, taskInfo.UID)
	}
	return job, task, nil
}

func (sc *SchedulerCache) AddBindTask(taskInfo *TaskInfo) error {
	sc.Mutex.Lock()
	defer sc.Mutex.Unlock()
	_, task, err := sc.findJobAndTask(taskInfo)
	if err != nil {
		return err
	}
	node, found := sc.Nodes[taskInfo.NodeName]
	if !found {
		return fmt.Errorf("failed to bind Task %v to host %v, host does not exist", task.UID, taskInfo.NodeName)
	}
	task.NodeName = taskInfo.NodeName
	if err := node.AddTask(task); err != nil {
		klog.Errorf("Failed to add task %v to node %v in cache: %v", task.UID, node.Name, err)
		sc.errTasks = append(sc.errTasks, task.UID)
		return err
	}
	sc.bindCache = append(sc.bindCache, task)
	return nil
}

func TestProbe(t *testing.T) {
	task := &TaskInfo{UID: "t-1", Job: "j-1", Name: "train-0", Namespace: "ml",
		Resreq: &Resource{MilliCPU: 8000, Memory: 16 << 30}}
	sc := &SchedulerCache{schedulerName: "volcano",
		Jobs: map[string]*JobInfo{"j-1": {UID: "j-1", Name: "train", Tasks: map[string]*TaskInfo{"t-1": task}}},
		Nodes: map[string]*NodeInfo{"node-a": {Name: "node-a", Idle: &Resource{MilliCPU: 4000, Memory: 8 << 30},
			Used: &Resource{}, Tasks: map[string]*TaskInfo{}}},
	}
	err := sc.AddBindTask(&TaskInfo{UID: "t-1", Job: "j-1", NodeName: "node-a"})
	if err == nil {
		t.Fatal("expected bind failure on an undersized node")
	}
	if len(sc.errTasks) != 1 {
		t.Fatalf("errTasks = %v", sc.errTasks)
	}
	t.Log(sc.String())
}
