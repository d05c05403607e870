// Project: containerd/containerd (runtime TaskList used by the tasks service).
// Bug (approximate): TaskList.GetAll held l.mu.RLock() and, while iterating,
// re-fetched each task through the public TaskList.Get(), which RLocks l.mu
// again. A concurrent Create -> TaskList.Add queued on l.mu.Lock() between the
// two RLocks, so the nested RLock waited for the writer and the writer waited
// for the outer RLock.
// Fix: GetAll uses an internal getLocked() helper that assumes l.mu is held.
package containerdtasklist

import (
	"errors"
	"sync"
	"testing"
	"time"
)

var (
	ErrNotFound      = errors.New("task not found")
	ErrAlreadyExists = errors.New("task already exists")
)

type Task interface {
	ID() string
	Namespace() string
	Pid() uint32
}

type shimTask struct {
	id, ns string
	pid    uint32
}

func (s *shimTask) ID() string        { return s.id }
func (s *shimTask) Namespace() string { return s.ns }
func (s *shimTask) Pid() uint32       { return s.pid }

// TaskList holds and provides locking around tasks, keyed by namespace and id.
type TaskList struct {
	mu    sync.RWMutex
	tasks map[string]map[string]Task
}

func NewTaskList() *TaskList { return &TaskList{tasks: map[string]map[string]Task{}} }

func (l *TaskList) Get(ns, id string) (Task, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.getLocked(ns, id)
}

func (l *TaskList) getLocked(ns, id string) (Task, error) {
	tasks, ok := l.tasks[ns]
	if !ok {
		return nil, ErrNotFound
	}
	t, ok := tasks[id]
	if !ok {
		return nil, ErrNotFound
	}
	return t, nil
}

// GetAll returns the tasks of ns matching filter.
func (l *TaskList) GetAll(ns string, filter func(Task) bool) []Task {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var out []Task
	for id := range l.tasks[ns] {
		time.Sleep(50 * time.Millisecond) // lets a writer queue up
		t, err := l.Get(ns, id)           // BUG: recursive RLock of l.mu
		if err != nil {
			continue
		}
		if filter == nil || filter(t) {
			out = append(out, t)
		}
	}
	return out
}

func (l *TaskList) Add(t Task) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ns := t.Namespace()
	if _, ok := l.tasks[ns]; !ok {
		l.tasks[ns] = map[string]Task{}
	}
	if _, ok := l.tasks[ns][t.ID()]; ok {
		return ErrAlreadyExists
	}
	l.tasks[ns][t.ID()] = t
	return nil
}

type TaskService struct {
	tasks *TaskList
}

// List implements the tasks.List RPC: pids of running tasks in ns.
func (s *TaskService) List(ns string) []uint32 {
	var pids []uint32
	for _, t := range s.tasks.GetAll(ns, func(t Task) bool { return t.Pid() != 0 }) {
		pids = append(pids, t.Pid())
	}
	return pids
}

// Create implements the tasks.Create RPC.
func (s *TaskService) Create(ns, id string, pid uint32) error {
	return s.tasks.Add(&shimTask{id: id, ns: ns, pid: pid})
}

func TestListWhileCreate(t *testing.T) {
	svc := &TaskService{tasks: NewTaskList()}
	if err := svc.Create("default", "redis", 100); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		t.Logf("pids: %v", svc.List("default"))
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		if err := svc.Create("default", "nginx", 200); err != nil {
			t.Errorf("create: %v", err)
		}
	}()
	wg.Wait()
}
