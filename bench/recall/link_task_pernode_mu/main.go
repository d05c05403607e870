// Pattern: Go standard library context.cancelCtx tree (per-node mu, parent and
// children links; cancel locks parent then child, removeChild runs after the
// child's lock is dropped) combined with an owning Scheduler as in worker
// pools. Each task's sched pointer is guarded by the task's OWN mutex; the
// scheduler's lock is never taken while any task lock is held or while walking.
package main

import (
	"fmt"
	"sync"
)

type Scheduler struct {
	name string
	mu   sync.Mutex
	runq map[*Task]struct{}
}

type Task struct {
	parent   *Task // immutable
	mu       sync.Mutex
	sched    *Scheduler // guarded by mu: tasks migrate between schedulers
	children map[*Task]struct{}
	done     bool
	budget   int
}

func (s *Scheduler) add(t *Task)    { s.mu.Lock(); s.runq[t] = struct{}{}; s.mu.Unlock() }
func (s *Scheduler) remove(t *Task) { s.mu.Lock(); delete(s.runq, t); s.mu.Unlock() }

func (s *Scheduler) Spawn(parent *Task, budget int) *Task {
	t := &Task{parent: parent, sched: s, children: map[*Task]struct{}{}, budget: budget}
	s.add(t) // before t is reachable from parent, so Cancel always finds it
	if parent != nil {
		parent.mu.Lock()
		dead := parent.done
		if !dead {
			parent.children[t] = struct{}{}
		}
		parent.mu.Unlock()
		if dead {
			t.Cancel()
		}
	}
	return t
}

// cancel: holds t.mu while locking children (parent-before-child order, as
// in context.cancelCtx.cancel). Canceled tasks are collected in out.
func (t *Task) cancel(removeFromParent bool, out *[]*Task) {
	t.mu.Lock()
	if t.done {
		t.mu.Unlock()
		return
	}
	t.done = true // freezes t.sched: Migrate ignores done tasks
	for c := range t.children {
		c.cancel(false, out)
	}
	t.children = nil
	t.mu.Unlock()
	*out = append(*out, t)
	if removeFromParent && t.parent != nil {
		t.parent.mu.Lock()
		delete(t.parent.children, t)
		t.parent.mu.Unlock()
	}
}

// Cancel touches schedulers only after every task lock has been released.
func (t *Task) Cancel() {
	var canceled []*Task
	t.cancel(true, &canceled)
	for _, c := range canceled {
		c.mu.Lock()
		s := c.sched
		c.mu.Unlock()
		s.remove(c)
	}
}

// Migrate moves t between schedulers; task lock and scheduler locks are
// never held together.
func (t *Task) Migrate(dst *Scheduler) {
	t.mu.Lock()
	src, done := t.sched, t.done
	if !done {
		t.sched = dst
	}
	t.mu.Unlock()
	if done || src == dst {
		return
	}
	src.remove(t)
	dst.add(t)
	t.mu.Lock()
	raced := t.done // canceled while we were moving it
	t.mu.Unlock()
	if raced {
		dst.remove(t)
	}
}

// Budget walks up the parent links, locking one task at a time.
func (t *Task) Budget() int {
	t.mu.Lock()
	b := t.budget
	t.mu.Unlock()
	if t.parent == nil {
		return b
	}
	return min(b, t.parent.Budget())
}

func main() {
	a := &Scheduler{name: "a", runq: map[*Task]struct{}{}}
	b := &Scheduler{name: "b", runq: map[*Task]struct{}{}}
	root := a.Spawn(nil, 100)
	var wg sync.WaitGroup
	mids := make(chan *Task, 16)
	var reaper sync.WaitGroup
	reaper.Add(1)
	go func() { // cancels subtrees concurrently with the workers
		defer reaper.Done()
		for m := range mids {
			m.Cancel()
		}
	}()
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				mid := a.Spawn(root, 50+i)
				leaf := b.Spawn(mid, 10+w)
				leaf.Migrate(a)
				mid.Migrate(b)
				_ = leaf.Budget()
				mids <- mid   // reaper locks mid then leaf ...
				leaf.Cancel() // ... while we lock leaf, then mid
				mid.Migrate(a)
			}
		}(w)
	}
	wg.Wait()
	close(mids)
	reaper.Wait()
	root.Cancel()
	fmt.Println("runq sizes:", len(a.runq), len(b.runq))
}
