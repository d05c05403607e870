// Project: grafana/loki ruler (pkg/ruler/memstore.go with the vendored prometheus rules.Manager), 2.x up to 2.7 (approximate), fixed February 2023.
// Bug: the MemStore cleanup loop holds MemStore.mtx while it calls mgr.AlertingRules(), which takes the rules.Manager read lock. A rule
// sync runs Manager.Update, which holds the manager write lock while it stops the old rule groups and waits for them to terminate. An
// old group that is restoring its "for" state queries the MemStore, whose Select waits for MemStore.mtx, so the cleanup loop, Update
// and the group wait on each other (PR #8453/#8486 "Fix ruler deadlock": the MemStore now reads rules from a caching GroupLoader).
package main

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

type Logger interface{ Log(keyvals ...any) error }

type RuleNode struct {
	Alert, Expr string
	For         time.Duration
}

type RuleGroups struct {
	Name  string
	Rules []RuleNode
}

type GroupLoader interface {
	Load(identifier string) (*RuleGroups, []error)
}

type fileLoader struct{ files map[string]*RuleGroups }

func (l fileLoader) Load(identifier string) (*RuleGroups, []error) { return l.files[identifier], nil }

type Sample struct{ Labels map[string]string }

type QueryFunc func(q string, ts time.Time) ([]Sample, error)

type AlertingRule struct {
	name, query  string
	holdDuration time.Duration
}

func NewAlertingRule(n RuleNode) *AlertingRule {
	return &AlertingRule{name: n.Alert, query: n.Expr, holdDuration: n.For}
}

func (r *AlertingRule) Name() string                { return r.name }
func (r *AlertingRule) Query() string               { return r.query }
func (r *AlertingRule) HoldDuration() time.Duration { return r.holdDuration }

type Querier interface {
	Select(matchers map[string]string) []Sample
}

type Queryable interface {
	Querier(mint, maxt int64) (Querier, error)
}

type ManagerOptions struct {
	Queryable   Queryable
	GroupLoader GroupLoader
}

type Group struct {
	name          string
	interval      time.Duration
	rules         []*AlertingRule
	opts          *ManagerOptions
	shouldRestore bool
	done          chan struct{}
	terminated    chan struct{}
}

func (g *Group) run() {
	defer close(g.terminated)
	tick := time.NewTicker(g.interval)
	defer tick.Stop()
	for {
		select {
		case <-g.done:
			return
		case <-tick.C:
			// rule evaluation elided; after the first evaluation the group restores the alerts' for state
			if g.shouldRestore {
				g.RestoreForState(time.Now())
				g.shouldRestore = false
			}
		}
	}
}

func (g *Group) stop() {
	close(g.done)
	<-g.terminated
}

// RestoreForState restores the 'for' state of the alerts by looking up the ALERTS_FOR_STATE series.
func (g *Group) RestoreForState(ts time.Time) {
	q, err := g.opts.Queryable.Querier(0, ts.UnixMilli())
	if err != nil {
		return
	}
	for _, r := range g.rules {
		q.Select(map[string]string{"__name__": "ALERTS_FOR_STATE", "alertname": r.Name(), "job": "api"})
	}
}

type Manager struct {
	opts   *ManagerOptions
	mtx    sync.RWMutex
	groups map[string]*Group
}

func (m *Manager) LoadGroups(files ...string) map[string]*Group {
	groups := map[string]*Group{}
	for _, fn := range files {
		rgs, _ := m.opts.GroupLoader.Load(fn)
		g := &Group{name: rgs.Name, interval: 50 * time.Millisecond, opts: m.opts, shouldRestore: true,
			done: make(chan struct{}), terminated: make(chan struct{})}
		for _, n := range rgs.Rules {
			g.rules = append(g.rules, NewAlertingRule(n))
		}
		groups[fn+";"+rgs.Name] = g
	}
	return groups
}

// Update stops the old groups and waits for them while holding the manager lock, as in prometheus/rules.
func (m *Manager) Update(files ...string) {
	m.mtx.Lock()
	defer m.mtx.Unlock()
	groups := m.LoadGroups(files...)
	var wg sync.WaitGroup
	for key, newg := range groups {
		oldg, ok := m.groups[key]
		delete(m.groups, key)
		wg.Add(1)
		go func(newg *Group) {
			if ok {
				oldg.stop()
			}
			wg.Done()
			go newg.run()
		}(newg)
	}
	wg.Wait()
	m.groups = groups
}

func (m *Manager) AlertingRules() []*AlertingRule {
	m.mtx.RLock()
	defer m.mtx.RUnlock()
	var alerts []*AlertingRule
	for _, g := range m.groups {
		alerts = append(alerts, g.rules...)
	}
	return alerts
}

type RuleIter interface{ AlertingRules() []*AlertingRule }

type MemStore struct {
	mtx             sync.Mutex
	userID          string
	queryFunc       QueryFunc
	mgr             RuleIter
	logger          Logger
	rules           map[string][]Sample
	initiated       chan struct{}
	cleanupInterval time.Duration
}

func (m *MemStore) Start(iter RuleIter) {
	m.mgr = iter
	close(m.initiated)
	go m.run()
}

// run periodically cleans up old samples of rules that are no longer tracked.
func (m *MemStore) run() {
	for range time.Tick(m.cleanupInterval) {
		m.mtx.Lock()
		holdDurs := map[string]time.Duration{}
		for _, rule := range m.mgr.AlertingRules() {
			holdDurs[rule.Name()] = rule.HoldDuration()
		}
		for ruleKey := range m.rules {
			if _, ok := holdDurs[ruleKey]; !ok {
				delete(m.rules, ruleKey)
			}
		}
		m.mtx.Unlock()
	}
}

func (m *MemStore) Querier(_, maxt int64) (Querier, error) {
	<-m.initiated
	return &memStoreQuerier{ts: time.UnixMilli(maxt), MemStore: m}, nil
}

type memStoreQuerier struct {
	ts time.Time
	*MemStore
}

// Select is only called to restore the for state of an alert; it evaluates the rule at ts-for and caches the result.
func (m *memStoreQuerier) Select(matchers map[string]string) []Sample {
	ruleKey := matchers["alertname"]
	var rule *AlertingRule
	for _, x := range m.mgr.AlertingRules() {
		if x.Name() == ruleKey {
			rule = x
			break
		}
	}
	if rule == nil {
		return nil
	}
	_ = m.logger.Log("msg", "restoring for state via evaluation", "rule", ruleKey)

	m.mtx.Lock()
	defer m.mtx.Unlock()
	if cached, ok := m.rules[ruleKey]; ok {
		return cached
	}
	vec, _ := m.queryFunc(rule.Query(), m.ts.Add(-rule.HoldDuration()))
	m.rules[ruleKey] = vec
	return vec
}

// slowLogger stands in for a logger that stalls once (e.g. a blocked log pipe) right after the rule lookup.
type slowLogger struct {
	once      sync.Once
	restoring chan struct{}
}

func (l *slowLogger) Log(kv ...any) error {
	if strings.Contains(fmt.Sprint(kv...), "restoring for state") {
		l.once.Do(func() { close(l.restoring); time.Sleep(300 * time.Millisecond) })
	}
	return nil
}

func main() {
	query := func(string, time.Time) ([]Sample, error) {
		return []Sample{{Labels: map[string]string{"job": "api"}}}, nil
	}
	files := map[string]*RuleGroups{"tenant-1/alerts.yaml": {Name: "errors",
		Rules: []RuleNode{{Alert: "HighErrorRate", Expr: `sum(rate({job="api"} |= "error" [1m])) > 1`, For: 5 * time.Minute}}}}
	logger := &slowLogger{restoring: make(chan struct{})}

	store := &MemStore{userID: "tenant-1", queryFunc: query, logger: logger, rules: map[string][]Sample{},
		initiated: make(chan struct{}), cleanupInterval: 100 * time.Millisecond}
	mgr := &Manager{groups: map[string]*Group{}, opts: &ManagerOptions{Queryable: store, GroupLoader: fileLoader{files: files}}}
	store.Start(mgr)

	mgr.Update("tenant-1/alerts.yaml")
	<-logger.restoring
	time.Sleep(20 * time.Millisecond)
	mgr.Update("tenant-1/alerts.yaml") // periodic rule sync replaces the group
	fmt.Println("ruler synced")
}
