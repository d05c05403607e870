// gVisor (google/gvisor), PR #14534 (2026): setsid(2) from a process that
// shares its signal handlers with another process deadlocks the sentry.
//
// ThreadGroup.CreateSession took the TaskSet mutex and then tg.signalHandlers.mu
// and held both across createSession, which moves tg out of its old process
// group. When leaving drops the old group's ancestor count to zero,
// ProcessGroup.decRefWithParent calls handleOrphan, which locks the signal
// mutex of every thread group still in that group to look for stopped jobs
// (a newly orphaned group with a stopped member gets SIGHUP and SIGCONT).
// createSession switches tg's own group first so tg's mutex is not taken
// twice, but clone(CLONE_VM|CLONE_SIGHAND) without CLONE_THREAD makes a second
// thread group sharing the same SignalHandlers. If it stays in the old group,
// handleOrphan locks the mutex CreateSession already holds: the setsid task
// blocks on itself while holding the TaskSet mutex, and every task that needs
// the TaskSet (here getppid) blocks behind it.
//
// The fixed twin follows the PR: CreateSession holds only the TaskSet mutex,
// and the signal mutex is taken just around clearing tg.tty.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type SignalHandlers struct {
	mu sync.Mutex
}

type TTY struct{ index int }

type TaskSet struct {
	mu       sync.RWMutex
	Root     *PIDNamespace
	sessions []*Session
}

type PIDNamespace struct {
	owner        *TaskSet
	tgids        map[*ThreadGroup]int
	threadGroups []*ThreadGroup
}

type Session struct {
	id     int
	leader *ThreadGroup
}

type ProcessGroup struct {
	id         int
	originator *ThreadGroup
	session    *Session
	ancestors  int
	refs       int64
}

type ThreadGroup struct {
	pidns             *PIDNamespace
	parent            *ThreadGroup
	signalHandlers    *SignalHandlers
	processGroup      *ProcessGroup
	groupStopComplete bool
	pendingSignals    []string
	tty               *TTY
}

func (ts *TaskSet) forEachThreadGroupLocked(f func(tg *ThreadGroup)) {
	for _, tg := range ts.Root.threadGroups {
		f(tg)
	}
}

func (tg *ThreadGroup) parentPG() *ProcessGroup {
	if tg.parent == nil {
		return nil
	}
	return tg.parent.processGroup
}

func (tg *ThreadGroup) forEachChild(f func(child *ThreadGroup)) {
	for _, child := range tg.pidns.threadGroups {
		if child.parent == tg {
			f(child)
		}
	}
}

func (pg *ProcessGroup) incRefWithParent(parentPG *ProcessGroup) {
	if pg != parentPG && (parentPG == nil || pg.session == parentPG.session) {
		pg.ancestors++
	}
	pg.refs++
}

func (pg *ProcessGroup) decRefWithParent(parentPG *ProcessGroup) {
	if pg != parentPG && (parentPG == nil || pg.session == parentPG.session) {
		pg.ancestors--
	}
	pg.refs--
	if pg.refs > 0 {
		pg.handleOrphan()
	}
}

func (pg *ProcessGroup) handleOrphan() {
	if pg.ancestors != 0 {
		return
	}
	hasStopped := false
	owner := pg.originator.pidns.owner
	owner.forEachThreadGroupLocked(func(tg *ThreadGroup) {
		if tg.processGroup != pg {
			return
		}
		tg.signalHandlers.mu.Lock()
		if tg.groupStopComplete {
			hasStopped = true
		}
		tg.signalHandlers.mu.Unlock()
	})
	if !hasStopped {
		return
	}
	owner.forEachThreadGroupLocked(func(tg *ThreadGroup) {
		if tg.processGroup != pg {
			return
		}
		tg.signalHandlers.mu.Lock()
		tg.pendingSignals = append(tg.pendingSignals, "SIGHUP", "SIGCONT")
		tg.signalHandlers.mu.Unlock()
	})
}

func (tg *ThreadGroup) CreateSession() (int, error) {
	tg.pidns.owner.mu.Lock()
	defer tg.pidns.owner.mu.Unlock()
	tg.signalHandlers.mu.Lock()
	defer tg.signalHandlers.mu.Unlock()
	return tg.createSession()
}

func (tg *ThreadGroup) createSession() (int, error) {
	id := tg.pidns.tgids[tg]
	if tg.processGroup != nil && tg.processGroup.id == id {
		return 0, errors.New("EPERM")
	}
	s := &Session{id: id, leader: tg}
	pg := &ProcessGroup{id: id, originator: tg, session: s, refs: 1}
	oldParentPG := tg.parentPG()
	tg.forEachChild(func(childTG *ThreadGroup) {
		childTG.processGroup.incRefWithParent(pg)
		childTG.processGroup.decRefWithParent(tg.processGroup)
	})
	oldPG := tg.processGroup
	tg.processGroup = pg
	oldPG.decRefWithParent(oldParentPG)
	tg.pidns.owner.sessions = append(tg.pidns.owner.sessions, s)
	tg.tty = nil
	return id, nil
}

func (tg *ThreadGroup) Getppid() int {
	tg.pidns.owner.mu.RLock()
	defer tg.pidns.owner.mu.RUnlock()
	return tg.pidns.tgids[tg.parent]
}

func main() {
	ts := &TaskSet{}
	ns := &PIDNamespace{owner: ts, tgids: map[*ThreadGroup]int{}}
	ts.Root = ns
	sess := &Session{id: 1}
	spawn := func(pid int, parent *ThreadGroup, sh *SignalHandlers, pg *ProcessGroup) *ThreadGroup {
		tg := &ThreadGroup{pidns: ns, parent: parent, signalHandlers: sh, processGroup: pg, tty: &TTY{index: 1}}
		ns.tgids[tg] = pid
		ns.threadGroups = append(ns.threadGroups, tg)
		pg.incRefWithParent(tg.parentPG())
		return tg
	}
	shellPG := &ProcessGroup{id: 1, session: sess}
	shell := spawn(1, nil, &SignalHandlers{}, shellPG)
	shellPG.originator, sess.leader = shell, shell

	// Pipeline "a | b" in group 10; a has exited, b cloned a stopped helper
	// with CLONE_VM|CLONE_SIGHAND that shares b's SignalHandlers.
	jobPG := &ProcessGroup{id: 10, session: sess}
	jobPG.originator = &ThreadGroup{pidns: ns, parent: shell}
	b := spawn(11, shell, &SignalHandlers{}, jobPG)
	helper := spawn(12, b, b.signalHandlers, jobPG)
	helper.groupStopComplete = true

	go func() {
		sid, err := b.CreateSession()
		fmt.Println("b setsid:", sid, err)
	}()
	time.Sleep(50 * time.Millisecond)
	fmt.Println("helper getppid:", helper.Getppid(), "pending:", helper.pendingSignals)
}
