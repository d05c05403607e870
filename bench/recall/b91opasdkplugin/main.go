// Project: open-policy-agent/opa (sdk/opa.go OPA.Plugin and the compiler trigger registered in OPA.configure, plugins/plugins.go Manager.Plugin and Manager.onCommit), v1.x, July 2026.
// Bug: OPA.Plugin held opa.mtx while calling manager.Plugin, which locks the manager's mtx, while a bundle activation runs Manager.onCommit with the manager mtx held and invokes the compiler trigger that the SDK registered, which locks opa.mtx to clear the query cache; an embedding application looking up a plugin during a policy update deadlocks with the bundle plugin (issue #8873, fixed by PR #8879, which snapshots the manager under opa.mtx and releases it before calling Manager.Plugin, and runs the triggers after releasing the manager mtx; code approximate).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type Transaction struct{ id int }

type Plugin interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context)
}

type pluginEntry struct {
	name   string
	plugin Plugin
}

// Manager mirrors plugins.Manager.
type Manager struct {
	mtx                sync.Mutex
	plugins            []pluginEntry
	registeredTriggers []func(Transaction)
	compilerMux        sync.RWMutex
	compiler           string
}

func (m *Manager) Register(name string, p Plugin) {
	m.mtx.Lock()
	defer m.mtx.Unlock()
	m.plugins = append(m.plugins, pluginEntry{name: name, plugin: p})
}

func (m *Manager) Plugin(name string) Plugin {
	m.mtx.Lock()
	defer m.mtx.Unlock()
	for _, p := range m.plugins {
		if p.name == name {
			return p.plugin
		}
	}
	return nil
}

func (m *Manager) RegisterCompilerTrigger(f func(Transaction)) {
	m.mtx.Lock()
	defer m.mtx.Unlock()
	m.registeredTriggers = append(m.registeredTriggers, f)
}

func (m *Manager) setCompiler(c string) {
	m.compilerMux.Lock()
	defer m.compilerMux.Unlock()
	m.compiler = c
}

func loadCompilerFromStore(_ context.Context, txn Transaction) string {
	time.Sleep(50 * time.Millisecond) // parse and compile the new modules
	return fmt.Sprintf("compiler@txn%d", txn.id)
}

// onCommit is the storage trigger the manager registers on its store.
func (m *Manager) onCommit(ctx context.Context, txn Transaction) {
	m.mtx.Lock()
	defer m.mtx.Unlock()
	compiler := loadCompilerFromStore(ctx, txn)
	m.setCompiler(compiler)
	for _, f := range m.registeredTriggers {
		f(txn)
	}
}

// ---- sdk ----

type queryCache struct {
	sync.Mutex
	cache map[string]string
}

func (qc *queryCache) Clear() {
	qc.Lock()
	defer qc.Unlock()
	qc.cache = map[string]string{}
}

type state struct {
	manager    *Manager
	queryCache *queryCache
}

type OPA struct {
	mtx   sync.Mutex
	state *state
}

func (opa *OPA) configure(manager *Manager) {
	manager.RegisterCompilerTrigger(func(Transaction) {
		opa.mtx.Lock()
		opa.state.queryCache.Clear()
		opa.mtx.Unlock()
	})
	opa.mtx.Lock()
	defer opa.mtx.Unlock()
	opa.state.manager = manager
}

// Plugin returns the named plugin. If the plugin does not exist, this function
// returns nil.
func (opa *OPA) Plugin(name string) Plugin {
	opa.mtx.Lock()
	defer opa.mtx.Unlock()
	return opa.state.manager.Plugin(name)
}

type bundlePlugin struct{ manager *Manager }

func (b *bundlePlugin) Start(context.Context) error { return nil }
func (b *bundlePlugin) Stop(context.Context)        {}

// activate commits a downloaded bundle; the store then fires the manager's
// OnCommit trigger.
func (b *bundlePlugin) activate(ctx context.Context, txn Transaction) {
	b.manager.onCommit(ctx, txn)
}

func main() {
	ctx := context.Background()
	m := &Manager{}
	opa := &OPA{state: &state{queryCache: &queryCache{cache: map[string]string{}}}}
	opa.configure(m)
	bp := &bundlePlugin{manager: m}
	m.Register("bundle", bp)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		bp.activate(ctx, Transaction{id: 7})
		fmt.Println("bundle activated")
	}()
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		if p := opa.Plugin("bundle"); p != nil {
			fmt.Println("application found bundle plugin")
		}
	}()
	wg.Wait()
}
