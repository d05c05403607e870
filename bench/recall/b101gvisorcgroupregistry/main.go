// Project: google/gvisor (pkg/sentry/kernel/cgroup.go CgroupRegistry, pkg/sentry/kernel task creation and Task.SendSignal, cgroupfs v1 mount and the cgroup v2 filesystem's tasksMu and cgroup.kill), 2026 per the dates in the discussion (lock order cycle described by a maintainer on PR #13683 and fixed on master by commit 1ce65696e78, which makes the registry mutex a leaf; function names in the v1/v2 controller hand-over are approximate).
// Bug: task creation takes CgroupRegistry.mu (computeInitialGroups) while holding the signal handlers lock, a cgroup v1 mount that steals a controller from the v2 tree takes the v2 filesystem's tasksMu while holding CgroupRegistry.mu, and a write to cgroup.kill sends SIGKILL to every member under tasksMu, which needs the signal handlers lock, so clone, mount and cgroup.kill can deadlock in a three-way cycle. The fix hands the controller over after releasing the registry mutex.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Signal int

const SIGKILL Signal = 9

type CgroupControllerType string

type Kernel struct{ cgroupRegistry *CgroupRegistry }

type TaskSet struct {
	mu   sync.RWMutex
	Root *PIDNamespace
}

type PIDNamespace struct {
	owner *TaskSet
	tids  map[*Task]int32
}

type SignalHandlers struct{ mu sync.Mutex }

type ThreadGroup struct {
	pidns          *PIDNamespace
	signalHandlers *SignalHandlers
	pending        []Signal
}

type Task struct {
	k       *Kernel
	tg      *ThreadGroup
	cgroups map[Cgroup]struct{}
	name    string
}

// SendSignal sends the given signal to t.
func (t *Task) SendSignal(sig Signal) error {
	t.tg.pidns.owner.mu.RLock()
	defer t.tg.pidns.owner.mu.RUnlock()
	t.tg.signalHandlers.mu.Lock()
	defer t.tg.signalHandlers.mu.Unlock()
	t.tg.pending = append(t.tg.pending, sig)
	return nil
}

type CgroupImpl interface{ Enter(t *Task) }

type Cgroup struct{ CgroupImpl } // plus the *kernfs.Dentry

type CgroupController interface {
	Type() CgroupControllerType
	RootCgroup() Cgroup
}

// cgroupFS is the interface the kernel uses to call into cgroupfs.
type cgroupFS interface {
	// releaseControllers detaches controllers from this (v2) hierarchy
	// because a v1 hierarchy claimed them.
	releaseControllers(ctypes []CgroupControllerType)
}

type hierarchy struct {
	id          uint32
	controllers map[CgroupControllerType]CgroupController
	fs          cgroupFS
}

// CgroupRegistry tracks the active set of cgroup controllers on the system.
type CgroupRegistry struct {
	lastHierarchyID uint32

	mu          sync.Mutex
	controllers map[CgroupControllerType]CgroupController
	owners      map[CgroupControllerType]uint32
	hierarchies map[uint32]hierarchy
}

// Register registers a new v1 hierarchy. Controllers currently attached to the
// unified (v2) hierarchy are stolen from it.
func (r *CgroupRegistry) Register(cs []CgroupController, fs cgroupFS) error {
	r.mu.Lock()
	defer r.mu.Unlock()

	r.lastHierarchyID++
	hid := r.lastHierarchyID
	h := hierarchy{id: hid, controllers: map[CgroupControllerType]CgroupController{}, fs: fs}
	stolen := map[cgroupFS][]CgroupControllerType{}
	for _, c := range cs {
		if owner, ok := r.owners[c.Type()]; ok {
			ofs := r.hierarchies[owner].fs
			stolen[ofs] = append(stolen[ofs], c.Type())
		}
		r.controllers[c.Type()] = c
		r.owners[c.Type()] = hid
		h.controllers[c.Type()] = c
	}
	r.hierarchies[hid] = h

	for ofs, ctypes := range stolen {
		ofs.releaseControllers(ctypes)
	}
	return nil
}

// computeInitialGroups returns the root cgroups a new task starts in.
func (r *CgroupRegistry) computeInitialGroups(inherit map[Cgroup]struct{}) map[Cgroup]struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()

	cgset := make(map[Cgroup]struct{})
	for cg := range inherit {
		cgset[cg] = struct{}{}
	}
	for _, ctl := range r.controllers {
		cgset[ctl.RootCgroup()] = struct{}{}
	}
	return cgset
}

// EnterInitialCgroups moves t into its initial cgroups.
func (t *Task) EnterInitialCgroups(initial map[Cgroup]struct{}) {
	for cg := range initial {
		cg.Enter(t)
		t.cgroups[cg] = struct{}{}
	}
}

// newTask is the clone(2) path: the new task is published in the TaskSet and
// gets its signal handlers with both locks held.
func (ts *TaskSet) newTask(k *Kernel, parent *Task, name string) *Task {
	tg := parent.tg
	t := &Task{k: k, tg: tg, cgroups: map[Cgroup]struct{}{}, name: name}

	ts.mu.Lock()
	tg.signalHandlers.mu.Lock()
	time.Sleep(60 * time.Millisecond) // copy credentials, FD table, signal mask
	initial := k.cgroupRegistry.computeInitialGroups(parent.cgroups)
	tg.pidns.tids[t] = int32(len(tg.pidns.tids) + 1)
	tg.signalHandlers.mu.Unlock()
	ts.mu.Unlock()

	t.EnterInitialCgroups(initial)
	return t
}

// filesystem is a cgroupfs instance, v1 or v2 (cgroup2).
type filesystem struct {
	v2 bool
	// tasksMu serializes task membership changes across all cgroups of this
	// filesystem.
	tasksMu     sync.RWMutex
	controllers map[CgroupControllerType]bool
	root        *cgroupInode
}

func newFilesystem(v2 bool, ctypes ...CgroupControllerType) *filesystem {
	fs := &filesystem{v2: v2, controllers: map[CgroupControllerType]bool{}}
	for _, ty := range ctypes {
		fs.controllers[ty] = true
	}
	fs.root = &cgroupInode{fs: fs, ts: map[*Task]struct{}{}}
	return fs
}

func (fs *filesystem) releaseControllers(ctypes []CgroupControllerType) {
	fs.tasksMu.Lock()
	defer fs.tasksMu.Unlock()
	for _, ty := range ctypes {
		delete(fs.controllers, ty) // and uncharge the members
	}
}

type cgroupInode struct {
	fs *filesystem
	ts map[*Task]struct{}
}

func (c *cgroupInode) Enter(t *Task) {
	c.fs.tasksMu.Lock()
	c.ts[t] = struct{}{}
	c.fs.tasksMu.Unlock()
}

// killFile implements cgroup.kill.
type killFile struct{ c *cgroupInode }

func (f *killFile) Write(val string) error {
	f.c.fs.tasksMu.RLock()
	defer f.c.fs.tasksMu.RUnlock()
	for t := range f.c.ts {
		if err := t.SendSignal(SIGKILL); err != nil {
			return err
		}
	}
	return nil
}

type controller struct {
	ty   CgroupControllerType
	root Cgroup
}

func (c *controller) Type() CgroupControllerType { return c.ty }
func (c *controller) RootCgroup() Cgroup         { return c.root }

func main() {
	ts := &TaskSet{}
	ts.Root = &PIDNamespace{owner: ts, tids: map[*Task]int32{}}
	reg := &CgroupRegistry{
		controllers: map[CgroupControllerType]CgroupController{},
		owners:      map[CgroupControllerType]uint32{},
		hierarchies: map[uint32]hierarchy{},
	}
	k := &Kernel{cgroupRegistry: reg}
	v2 := newFilesystem(true, "memory", "cpu")
	v2root := Cgroup{v2.root}
	if err := reg.Register([]CgroupController{&controller{"memory", v2root}, &controller{"cpu", v2root}}, v2); err != nil {
		panic(err)
	}
	initTask := &Task{k: k, tg: &ThreadGroup{pidns: ts.Root, signalHandlers: &SignalHandlers{}}, cgroups: map[Cgroup]struct{}{v2root: {}}, name: "init"}
	ts.Root.tids[initTask] = 1
	v2.root.ts[initTask] = struct{}{}

	done := make(chan struct{}, 3)
	go func() { // clone(2) in init's thread group
		fmt.Println("clone:", ts.newTask(k, initTask, "init-thread").name)
		done <- struct{}{}
	}()
	time.Sleep(10 * time.Millisecond)
	go func() { // echo 1 > /sys/fs/cgroup/cgroup.kill
		fmt.Println("cgroup.kill:", (&killFile{c: v2.root}).Write("1"))
		done <- struct{}{}
	}()
	time.Sleep(10 * time.Millisecond)
	go func() { // mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory
		v1 := newFilesystem(false, "memory")
		fmt.Println("mount v1 memory:", reg.Register([]CgroupController{&controller{"memory", Cgroup{v1.root}}}, v1))
		done <- struct{}{}
	}()
	<-done
	<-done
	<-done
	fmt.Println("ok")
}
