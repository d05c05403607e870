// Project: open-policy-agent/opa-envoy-plugin (internal/internal.go envoyExtAuthzGrpcServer.Check) with OPA's plugins/logs/plugin.go (Plugin.Log, maskEvent, compilerUpdated), storage/inmem/inmem.go and plugins/plugins.go (Manager.onCommit), opa 0.28.0-envoy, August 2021.
// Bug: the Envoy ext_authz Check closed its read transaction before logging the decision, so the decision logger's maskEvent, holding maskMutex, prepared the mask query without a transaction and opened a new read transaction (inmem rmu.RLock). A concurrent bundle activation commits with rmu write-locked and runs the manager's compiler triggers, whose compilerUpdated locks maskMutex, so the two goroutines deadlock (opa issue #3722, fixed by opa-envoy-plugin PR #279, which keeps the transaction open until the decision is logged and passes it to the logger).
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ---- storage/inmem ----

type Transaction struct {
	write bool
	data  map[string]string
}

type TriggerConfig struct {
	OnCommit func(ctx context.Context, txn *Transaction)
}

type store struct {
	rmu      sync.RWMutex // reader-writer lock
	wmu      sync.Mutex   // writer lock
	data     map[string]string
	triggers []TriggerConfig
}

func (db *store) NewTransaction(_ context.Context, write bool) *Transaction {
	if write {
		db.wmu.Lock()
	} else {
		db.rmu.RLock()
	}
	return &Transaction{write: write, data: db.data}
}

func (db *store) Commit(ctx context.Context, txn *Transaction) {
	if txn.write {
		db.rmu.Lock()
		db.data = txn.data
		db.runOnCommitTriggers(ctx, txn)
		db.rmu.Unlock()
		db.wmu.Unlock()
	} else {
		db.rmu.RUnlock()
	}
}

func (db *store) Abort(_ context.Context, txn *Transaction) {
	if txn.write {
		db.wmu.Unlock()
	} else {
		db.rmu.RUnlock()
	}
}

func (db *store) runOnCommitTriggers(ctx context.Context, txn *Transaction) {
	for _, t := range db.triggers {
		t.OnCommit(ctx, txn)
	}
}

// ---- rego ----

type PreparedEvalQuery struct{ query string }

// PrepareForEval opens its own read transaction when none was supplied.
func PrepareForEval(ctx context.Context, s *store, txn *Transaction, query string) PreparedEvalQuery {
	if txn == nil {
		txn = s.NewTransaction(ctx, false)
		defer s.Abort(ctx, txn)
	}
	return PreparedEvalQuery{query: query + "@" + txn.data["policy"]}
}

// ---- plugins.Manager ----

type Manager struct {
	Store              *store
	registeredTriggers []func(*Transaction)
}

func (m *Manager) RegisterCompilerTrigger(f func(*Transaction)) {
	m.registeredTriggers = append(m.registeredTriggers, f)
}

func (m *Manager) onCommit(_ context.Context, txn *Transaction) {
	for _, f := range m.registeredTriggers {
		f(txn)
	}
}

// ---- plugins/logs ----

type Info struct {
	DecisionID string
	Txn        *Transaction
}

type LogPlugin struct {
	manager   *Manager
	maskMutex sync.Mutex
	mask      *PreparedEvalQuery
}

func (p *LogPlugin) Log(ctx context.Context, decision *Info) error {
	return p.maskEvent(ctx, decision.Txn, decision.DecisionID)
}

func (p *LogPlugin) maskEvent(ctx context.Context, txn *Transaction, id string) error {
	p.maskMutex.Lock()
	defer p.maskMutex.Unlock()
	if p.mask == nil {
		time.Sleep(50 * time.Millisecond) // build the data.system.log.mask query
		pq := PrepareForEval(ctx, p.manager.Store, txn, "data.system.log.mask")
		p.mask = &pq
	}
	_ = id
	return nil
}

func (p *LogPlugin) compilerUpdated(*Transaction) {
	p.maskMutex.Lock()
	defer p.maskMutex.Unlock()
	p.mask = nil
}

// ---- opa-envoy-plugin ----

type envoyExtAuthzGrpcServer struct {
	manager *Manager
	logger  *LogPlugin
}

func (p *envoyExtAuthzGrpcServer) Check(ctx context.Context, id string) bool {
	txn := p.manager.Store.NewTransaction(ctx, false)
	defer p.manager.Store.Abort(ctx, txn)
	allowed := txn.data["policy"] != "" // eval data.envoy.authz.allow

	if err := p.logger.Log(ctx, &Info{DecisionID: id, Txn: txn}); err != nil {
		fmt.Println("decision log:", err)
	}
	return allowed
}

// ---- plugins/bundle ----

func activateBundle(ctx context.Context, m *Manager, revision string) {
	txn := m.Store.NewTransaction(ctx, true)
	txn.data = map[string]string{"policy": revision}
	m.Store.Commit(ctx, txn)
}

func main() {
	ctx := context.Background()
	s := &store{data: map[string]string{"policy": "rev1"}}
	m := &Manager{Store: s}
	s.triggers = append(s.triggers, TriggerConfig{OnCommit: m.onCommit})
	logger := &LogPlugin{manager: m}
	m.RegisterCompilerTrigger(logger.compilerUpdated)
	srv := &envoyExtAuthzGrpcServer{manager: m, logger: logger}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		fmt.Println("check allowed:", srv.Check(ctx, "decision-1"))
	}()
	go func() {
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		activateBundle(ctx, m, "rev2")
		fmt.Println("bundle rev2 activated")
	}()
	wg.Wait()
}
