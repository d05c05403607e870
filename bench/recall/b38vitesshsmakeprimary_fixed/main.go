// Project: vitessio/vitess (go/vt/vttablet/tabletserver/health_streamer.go and
// go/vt/vttablet/tabletserver/schema/engine.go, v19-v21).
// Issue #17229, fixed by PR #17261 "Fix potential deadlock in health streamer"
// (the follow-up to PR #17230, which fixed the messager/schema-engine pair).
//
// The schema engine notifies its subscribers from broadcast() while holding
// se.notifierMu; the health streamer's notifier closure calls hs.reload, which
// locks hs.mu (line 143). A tablet that turns into a serving primary calls
// healthStreamer.MakePrimary, which holds hs.mu (deferred unlock) while it
// registers that closure through se.RegisterNotifier, which locks se.notifierMu
// (line 57). A schema reload racing with a promotion (PRS/ERS, or the state
// manager flapping serving) therefore takes notifierMu -> hs.mu on one
// goroutine and hs.mu -> notifierMu on the other: an AB-BA deadlock that wedges
// both the schema engine and the tablet state manager. The fix lets go of hs.mu
// before calling RegisterNotifier.
// FIXED TWIN of b38vitesshsmakeprimary: hs.mu is released before RegisterNotifier is called.
package main

import (
	"fmt"
	"maps"
	"sync"
)

// ---- schema package -------------------------------------------------------

type Table struct {
	Name string
}

type notifier func(full map[string]*Table, created, altered, dropped []*Table, udfsChanged bool)

// Engine keeps the schema of the tablet and notifies subscribers of changes.
type Engine struct {
	mu     sync.Mutex
	isOpen bool
	tables map[string]*Table

	notifierMu sync.Mutex
	notifiers  map[string]notifier
}

func NewEngine() *Engine {
	return &Engine{
		isOpen:    true,
		tables:    map[string]*Table{"t1": {Name: "t1"}},
		notifiers: make(map[string]notifier),
	}
}

// RegisterNotifier registers the function for schema change notification.
func (se *Engine) RegisterNotifier(name string, f notifier, runNotifier bool) {
	if !se.isOpen {
		return
	}

	se.notifierMu.Lock()
	defer se.notifierMu.Unlock()

	se.notifiers[name] = f
	var created []*Table
	for _, table := range se.tables {
		created = append(created, table)
	}
	if runNotifier {
		s := maps.Clone(se.tables)
		f(s, created, nil, nil, true)
	}
}

// UnregisterNotifier unregisters the notifier function.
func (se *Engine) UnregisterNotifier(name string) {
	if !se.isOpen {
		return
	}
	se.notifierMu.Lock()
	defer se.notifierMu.Unlock()
	delete(se.notifiers, name)
}

// broadcast must be called while holding a lock on se.mu.
func (se *Engine) broadcast(created, altered, dropped []*Table, udfsChanged bool) {
	if !se.isOpen {
		return
	}

	se.notifierMu.Lock()
	defer se.notifierMu.Unlock()
	s := maps.Clone(se.tables)
	for _, f := range se.notifiers {
		f(s, created, altered, dropped, udfsChanged)
	}
}

// Reload reloads the schema from MySQL and broadcasts the altered tables.
func (se *Engine) Reload() error {
	se.mu.Lock()
	defer se.mu.Unlock()
	altered := []*Table{se.tables["t1"]}
	se.broadcast(nil, altered, nil, false)
	return nil
}

// ---- tabletserver package -------------------------------------------------

type healthStreamer struct {
	se                     *Engine
	signalWhenSchemaChange bool

	mu               sync.Mutex
	isServingPrimary bool
	tableSchemaCount int
}

// MakePrimary tells the healthstreamer that the current tablet is now the primary,
// so it can read and write to the MySQL instance for schema-tracking.
func (hs *healthStreamer) MakePrimary(serving bool) {
	hs.mu.Lock()
	hs.isServingPrimary = serving
	// We let go of the lock here because we don't want to hold the lock when calling RegisterNotifier.
	// If we hold the lock, we can end up in a deadlock because RegisterNotifier also tries to take a lock.
	hs.mu.Unlock()
	// We register for notifications from the schema Engine only when schema tracking is enabled,
	// and we are going to a serving primary state.
	if serving && hs.signalWhenSchemaChange {
		hs.se.RegisterNotifier("healthStreamer", func(full map[string]*Table, created, altered, dropped []*Table, udfsChanged bool) {
			if err := hs.reload(created, altered, dropped, udfsChanged); err != nil {
				fmt.Println("periodic schema reload failed in health stream:", err)
			}
		}, false)
	}
}

// MakeNonPrimary tells the healthstreamer that the current tablet is now not a primary.
func (hs *healthStreamer) MakeNonPrimary() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.isServingPrimary = false
}

// reload reloads the schema from the underlying mysql for the tables that we get the alert on.
func (hs *healthStreamer) reload(created, altered, dropped []*Table, udfsChanged bool) error {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	// Schema Reload to happen only on primary when it is serving.
	if !hs.isServingPrimary {
		return nil
	}
	hs.tableSchemaCount += len(created) + len(altered) + len(dropped)
	return nil
}

func main() {
	se := NewEngine()
	hs := &healthStreamer{se: se, signalWhenSchemaChange: true}
	hs.MakePrimary(true)

	var wg sync.WaitGroup
	wg.Add(2)
	// The schema tracker reloads the schema after DDLs.
	go func() {
		defer wg.Done()
		for i := 0; i < 200000; i++ {
			_ = se.Reload()
		}
	}()
	// The state manager flips the tablet between serving and not serving
	// primary (PlannedReparentShard, DemotePrimary/UndoDemotePrimary).
	go func() {
		defer wg.Done()
		for i := 0; i < 200000; i++ {
			hs.MakeNonPrimary()
			hs.MakePrimary(true)
		}
	}()
	wg.Wait()
	fmt.Println("ok, schema changes seen:", hs.tableSchemaCount > 0)
}
