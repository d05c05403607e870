// Project: vitessio/vitess (go/vt/vttablet/tabletserver/health_streamer.go healthStreamer.Close and reload, go/vt/vttablet/tabletserver/schema/engine.go Engine.RegisterNotifier, UnregisterNotifier, broadcast), v19 to v21, November 2024 (issue #17229, health-streamer half of PR #17230 "Fix deadlock in messager and health streamer").
// Bug: healthStreamer.Close holds hs.mu while it calls se.UnregisterNotifier, which takes the schema engine's notifierMu, while a schema reload broadcasts to its notifiers under notifierMu and the health streamer's notifier (hs.reload) takes hs.mu. A tablet state transition that closes the health streamer while a schema reload is broadcasting deadlocks AB-BA on hs.mu and se.notifierMu. The fix gives the health streamer a separate fieldsMu for its state, so reload no longer needs the mutex that Close holds.
package b102vitesshsclose

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"
)

type Table struct{ Name string }

type notifier func(full map[string]*Table, created, altered, dropped []*Table, udfsChanged bool)

// Engine is the tablet's schema engine (schema/engine.go).
type Engine struct {
	isOpen     bool
	mu         sync.Mutex
	tables     map[string]*Table
	notifierMu sync.Mutex
	notifiers  map[string]notifier
	loadTables func() []string // reads information_schema
}

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
		f(maps.Clone(se.tables), created, nil, nil, true)
	}
}

func (se *Engine) UnregisterNotifier(name string) {
	if !se.isOpen {
		return
	}
	se.notifierMu.Lock()
	defer se.notifierMu.Unlock()
	delete(se.notifiers, name)
}

// Reload reloads the schema from MySQL and notifies the subscribers.
func (se *Engine) Reload(ctx context.Context) error {
	se.mu.Lock()
	defer se.mu.Unlock()
	var created []*Table
	for _, name := range se.loadTables() {
		if _, ok := se.tables[name]; !ok {
			t := &Table{Name: name}
			se.tables[name] = t
			created = append(created, t)
		}
	}
	se.broadcast(created, nil, nil, false)
	return nil
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

type StreamHealthResponse struct{ TableSchemaChanged []string }

type healthStreamer struct {
	mu                     sync.Mutex
	ctx                    context.Context
	cancel                 context.CancelFunc
	clients                map[chan *StreamHealthResponse]struct{}
	state                  *StreamHealthResponse
	isServingPrimary       bool
	signalWhenSchemaChange bool
	se                     *Engine
}

func (hs *healthStreamer) Open() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.ctx, hs.cancel = context.WithCancel(context.Background())
}

func (hs *healthStreamer) Close() {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.cancel != nil {
		hs.se.UnregisterNotifier("healthStreamer")
		hs.cancel()
		hs.cancel = nil
	}
}

func (hs *healthStreamer) MakePrimary(serving bool) {
	hs.mu.Lock()
	hs.isServingPrimary = serving
	hs.mu.Unlock()
	if serving && hs.signalWhenSchemaChange {
		hs.se.RegisterNotifier("healthStreamer", func(full map[string]*Table, created, altered, dropped []*Table, udfsChanged bool) {
			_ = hs.reload(created, altered, dropped, udfsChanged)
		}, false)
	}
}

func (hs *healthStreamer) reload(created, altered, dropped []*Table, udfsChanged bool) error {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if !hs.isServingPrimary {
		return nil
	}
	var tables []string
	for _, t := range created {
		tables = append(tables, t.Name)
	}
	hs.state.TableSchemaChanged = tables
	shr := *hs.state
	hs.broadCastToClients(&shr)
	hs.state.TableSchemaChanged = nil
	return nil
}

func (hs *healthStreamer) broadCastToClients(shr *StreamHealthResponse) {
	for ch := range hs.clients {
		select {
		case ch <- shr:
		default:
			close(ch)
			delete(hs.clients, ch)
		}
	}
}

// QueryEngine subscribes to schema changes to purge its plan cache.
type QueryEngine struct {
	mu           sync.Mutex
	tables       map[string]*Table
	purgePlans   func()
	schemaEngine *Engine
}

func (qe *QueryEngine) Open() {
	qe.schemaEngine.RegisterNotifier("qe", qe.schemaChanged, true)
}

func (qe *QueryEngine) schemaChanged(full map[string]*Table, created, altered, dropped []*Table, udfsChanged bool) {
	qe.mu.Lock()
	defer qe.mu.Unlock()
	qe.tables = full
	qe.purgePlans()
}

func TestB102vitesshsclose(t *testing.T) {
	qeNotified := make(chan struct{})
	se := &Engine{isOpen: true, tables: map[string]*Table{"t1": {Name: "t1"}}, notifiers: map[string]notifier{},
		loadTables: func() []string { return []string{"t1", "t2"} }}
	hs := &healthStreamer{clients: map[chan *StreamHealthResponse]struct{}{}, state: &StreamHealthResponse{},
		signalWhenSchemaChange: true, se: se}
	hs.Open()
	hs.MakePrimary(true)
	var purgeOnce sync.Once
	qe := &QueryEngine{schemaEngine: se, purgePlans: func() {
		purgeOnce.Do(func() {
			close(qeNotified)
			time.Sleep(100 * time.Millisecond) // purging a large plan cache
		})
	}}
	done := make(chan struct{}, 3)
	// The query engine subscribes while the tablet changes state.
	go func() { qe.Open(); done <- struct{}{} }()
	<-qeNotified
	// A DDL on the primary triggers a schema reload.
	go func() { _ = se.Reload(context.Background()); done <- struct{}{} }()
	time.Sleep(30 * time.Millisecond)
	// The tablet state transition closes the health streamer.
	go func() { hs.Close(); done <- struct{}{} }()
	for i := 0; i < 3; i++ {
		<-done
	}
}
