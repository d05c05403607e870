// FIXED TWIN. Project: nomad (client/allocrunner).
// Bug (approximate, from memory): allocRunner.Destroy() took destroyedLock
// and, while still holding it, closed destroyCh and blocked on <-ar.WaitCh()
// for the Run() goroutine to finish. But Run()'s postrun hooks consult
// ar.IsDestroyed() (passed to the hooks as a method value), which takes
// destroyedLock, so Run() never closes waitCh and the client wedges on
// alloc GC/stop. Exact issue/PR not remembered (approximate). Fix: mark the
// destroy as launched under the lock, release it, then wait for Run() and
// re-take the lock to set destroyed.
package nomad_allocrunner_fixed

import (
	"sync"
	"testing"
	"time"
)

type Allocation struct {
	ID    string
	Tasks []string
}

// ---- taskrunner ----

type taskRunner struct {
	taskName string
	killCh   chan struct{}
	waitCh   chan struct{}
	killOnce sync.Once
}

func newTaskRunner(name string) *taskRunner {
	return &taskRunner{taskName: name, killCh: make(chan struct{}), waitCh: make(chan struct{})}
}

func (tr *taskRunner) Run() {
	defer close(tr.waitCh)
	<-tr.killCh // the driver handle waits for the task to exit
}

func (tr *taskRunner) Kill() {
	tr.killOnce.Do(func() { close(tr.killCh) })
}

func (tr *taskRunner) WaitCh() <-chan struct{} { return tr.waitCh }

// ---- runner hooks ----

type RunnerPostrunHook interface {
	Name() string
	Postrun() error
}

// allocDirHook persists/cleans the alloc dir; it must not persist state for
// an alloc that is being destroyed.
type allocDirHook struct {
	isDestroyed func() bool
	persisted   bool
}

func (h *allocDirHook) Name() string { return "alloc_dir" }
func (h *allocDirHook) Postrun() error {
	if h.isDestroyed() {
		return nil
	}
	h.persisted = true
	return nil
}

// ---- allocrunner ----

type allocRunner struct {
	alloc *Allocation
	tasks map[string]*taskRunner

	// destroyed is true when the alloc runner has been destroyed.
	destroyed       bool
	destroyLaunched bool
	destroyCh       chan struct{}
	destroyedLock   sync.Mutex

	// waitCh is closed when Run() exits.
	waitCh chan struct{}

	runnerHooks []RunnerPostrunHook
}

func NewAllocRunner(alloc *Allocation) *allocRunner {
	ar := &allocRunner{
		alloc:     alloc,
		tasks:     make(map[string]*taskRunner),
		destroyCh: make(chan struct{}),
		waitCh:    make(chan struct{}),
	}
	for _, name := range alloc.Tasks {
		ar.tasks[name] = newTaskRunner(name)
	}
	ar.initRunnerHooks()
	return ar
}

func (ar *allocRunner) initRunnerHooks() {
	ar.runnerHooks = []RunnerPostrunHook{
		&allocDirHook{isDestroyed: ar.IsDestroyed},
	}
}

// Run the AllocRunner. Starts tasks if the alloc is non-terminal and closes
// WaitCh when it exits. Should be started in a goroutine.
func (ar *allocRunner) Run() {
	defer close(ar.waitCh)

	taskWaitCh := ar.runTasks()

	select {
	case <-taskWaitCh:
	case <-ar.destroyCh:
		ar.killTasks()
		<-taskWaitCh
	}

	if err := ar.postrun(); err != nil {
		return
	}
}

func (ar *allocRunner) runTasks() <-chan struct{} {
	var wg sync.WaitGroup
	for _, tr := range ar.tasks {
		wg.Add(1)
		go func(tr *taskRunner) {
			defer wg.Done()
			tr.Run()
		}(tr)
	}
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	return ch
}

func (ar *allocRunner) killTasks() {
	for _, tr := range ar.tasks {
		tr.Kill()
		<-tr.WaitCh()
	}
}

// postrun is used to run the runners postrun hooks.
func (ar *allocRunner) postrun() error {
	for _, hook := range ar.runnerHooks {
		if err := hook.Postrun(); err != nil {
			return err
		}
	}
	return nil
}

// IsDestroyed returns true if the alloc runner has been destroyed.
func (ar *allocRunner) IsDestroyed() bool {
	ar.destroyedLock.Lock()
	defer ar.destroyedLock.Unlock()
	return ar.destroyed
}

func (ar *allocRunner) WaitCh() <-chan struct{} { return ar.waitCh }

// Destroy the alloc runner by stopping it if it is still running and
// cleaning up all of its resources.
func (ar *allocRunner) Destroy() {
	ar.destroyedLock.Lock()
	if ar.destroyed || ar.destroyLaunched {
		ar.destroyedLock.Unlock()
		return
	}
	ar.destroyLaunched = true
	close(ar.destroyCh)
	ar.destroyedLock.Unlock() // FIX: don't hold destroyedLock while waiting for Run()

	<-ar.WaitCh()

	ar.destroyedLock.Lock()
	ar.destroyed = true
	ar.destroyedLock.Unlock()
}

func TestAllocRunner_Destroy(t *testing.T) {
	ar := NewAllocRunner(&Allocation{ID: "6f5b1c7e", Tasks: []string{"web", "sidecar"}})
	go ar.Run()

	time.Sleep(20 * time.Millisecond) // tasks are running

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // client GC
		defer wg.Done()
		ar.Destroy()
	}()
	wg.Wait()

	if !ar.IsDestroyed() {
		t.Fatal("alloc runner not destroyed")
	}
}
