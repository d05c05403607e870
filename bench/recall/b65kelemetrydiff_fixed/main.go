// Shape of kubewharf/kelemetry#334 ("fix(diff): diff controller would
// deadlock when leader re-elects"): when a leader term of the diff
// controller ends, the shutdown path holds the controller's monitors lock
// while closing each monitor, and a monitor's close callback removes itself
// from the controller, locking the same mutex again (reentrance). The next
// leader term then blocks forever acquiring the lock to restart watching.
// (Lock and method names are reconstructed from the PR description.)
package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

type GVR struct{ Group, Version, Resource string }

func (g GVR) String() string { return g.Group + "/" + g.Version + "/" + g.Resource }

// monitor watches one resource type and writes object diffs to the cache.
type monitor struct {
	gvr     GVR
	closed  bool
	onClose func(GVR)
	seen    int
}

func (m *monitor) handle(obj string) { m.seen++ }

func (m *monitor) close() {
	m.closed = true
	m.onClose(m.gvr)
}

type controller struct {
	monitorsLock sync.Mutex
	monitors     map[GVR]*monitor
	discovered   func() []GVR
}

func (ctrl *controller) startMonitors() {
	ctrl.monitorsLock.Lock()
	defer ctrl.monitorsLock.Unlock()
	for _, gvr := range ctrl.discovered() {
		if _, ok := ctrl.monitors[gvr]; ok {
			continue
		}
		ctrl.monitors[gvr] = &monitor{gvr: gvr, onClose: ctrl.removeMonitor}
	}
	fmt.Println("watching", len(ctrl.monitors), "resource types")
}

// removeMonitor is the monitor's close callback.
func (ctrl *controller) removeMonitor(gvr GVR) {
	ctrl.monitorsLock.Lock()
	defer ctrl.monitorsLock.Unlock()
	delete(ctrl.monitors, gvr)
}

func (ctrl *controller) stopMonitors() {
	// Fix (#334): collect the monitors under the lock and close them after
	// releasing it, since close calls back into removeMonitor.
	ctrl.monitorsLock.Lock()
	gvrs := make([]GVR, 0, len(ctrl.monitors))
	for gvr := range ctrl.monitors {
		gvrs = append(gvrs, gvr)
	}
	sort.Slice(gvrs, func(i, j int) bool { return gvrs[i].String() < gvrs[j].String() })
	toClose := make([]*monitor, 0, len(gvrs))
	for _, gvr := range gvrs {
		toClose = append(toClose, ctrl.monitors[gvr])
	}
	ctrl.monitorsLock.Unlock()
	for _, m := range toClose {
		m.close()
	}
}

// runLeaderTerm is the OnStartedLeading callback of the write elector.
func (ctrl *controller) runLeaderTerm(ctx context.Context, term int) {
	ctrl.startMonitors()
	<-ctx.Done() // lease lost
	fmt.Println("term", term, "ended, stopping monitors")
	ctrl.stopMonitors()
}

// elector hands out leader terms; a lost lease cancels the term's context
// and the next acquisition starts a new term without waiting for the old one.
type elector struct {
	term int
}

func (e *elector) acquire(parent context.Context, onStarted func(context.Context, int)) context.CancelFunc {
	e.term++
	ctx, cancel := context.WithCancel(parent)
	go onStarted(ctx, e.term)
	return cancel
}

func main() {
	ctrl := &controller{
		monitors: map[GVR]*monitor{},
		discovered: func() []GVR {
			return []GVR{{"apps", "v1", "deployments"}, {"", "v1", "pods"}}
		},
	}
	el := &elector{}

	loseLease := el.acquire(context.Background(), ctrl.runLeaderTerm)
	time.Sleep(50 * time.Millisecond)
	loseLease() // apiserver hiccup: the lease could not be renewed
	time.Sleep(50 * time.Millisecond)

	// The lease is re-acquired: a new term restarts watching.
	ctrl.startMonitors()
	fmt.Println("re-elected")
}
