// Project: prometheus/prometheus (rules/alerting.go AlertingRule.Eval, SetHealth, SetLastError, Health; rules/manager.go Group.Eval; web/api/v1 rules endpoint), 2.4.0 development, August 2018 (rule health added by PR #4457, fixed by commit b7e2f40; approximate).
// Bug: when rule health and last error were added, AlertingRule.Eval recorded the outcome through the new locking setters SetHealth and SetLastError while it still held r.mtx, which it takes to update the active alerts, so the rule group goroutine blocked forever on its own mutex during evaluation, and every later reader of the rule (rules page, /api/v1/rules, alerts API) hung behind it. The fix assigns r.health and r.lastError directly inside the locked section.
package b100promrulehealth

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"testing"
	"time"
)

type RuleHealth string

const (
	HealthUnknown RuleHealth = "unknown"
	HealthGood    RuleHealth = "ok"
	HealthBad     RuleHealth = "err"
)

type AlertState int

const (
	StateInactive AlertState = iota
	StatePending
	StateFiring
)

type Labels map[string]string

func (ls Labels) Hash() uint64 {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := fnv.New64a()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s,", k, ls[k])
	}
	return h.Sum64()
}

type Sample struct {
	Metric Labels
	V      float64
}

type Vector []Sample

type QueryFunc func(ctx context.Context, q string, t time.Time) (Vector, error)

type Alert struct {
	State    AlertState
	Labels   Labels
	Value    float64
	ActiveAt time.Time
}

// Rule is the interface the rule group evaluates (rules.Rule).
type Rule interface {
	Name() string
	Eval(ctx context.Context, ts time.Time, query QueryFunc) (Vector, error)
	SetHealth(RuleHealth)
	Health() RuleHealth
	SetLastError(error)
	LastError() error
}

type AlertingRule struct {
	name         string
	vector       string
	holdDuration time.Duration

	// Protects the fields below.
	mtx       sync.Mutex
	active    map[uint64]*Alert
	health    RuleHealth
	lastError error
}

func (r *AlertingRule) Name() string { return r.name }

// SetHealth sets the current health of the rule.
func (r *AlertingRule) SetHealth(health RuleHealth) {
	r.mtx.Lock()
	defer r.mtx.Unlock()
	r.health = health
}

// Health returns the current health of the rule.
func (r *AlertingRule) Health() RuleHealth {
	r.mtx.Lock()
	defer r.mtx.Unlock()
	return r.health
}

// SetLastError sets the current error seen by the alerting rule.
func (r *AlertingRule) SetLastError(err error) {
	r.mtx.Lock()
	defer r.mtx.Unlock()
	r.lastError = err
}

// LastError returns the last error seen by the alerting rule.
func (r *AlertingRule) LastError() error {
	r.mtx.Lock()
	defer r.mtx.Unlock()
	return r.lastError
}

// Eval evaluates the rule expression and then creates pending alerts and fires
// or removes previously pending alerts accordingly.
func (r *AlertingRule) Eval(ctx context.Context, ts time.Time, query QueryFunc) (Vector, error) {
	res, err := query(ctx, r.vector, ts)
	if err != nil {
		r.SetHealth(HealthBad)
		r.SetLastError(err)
		return nil, err
	}

	r.mtx.Lock()
	defer r.mtx.Unlock()

	resultFPs := map[uint64]struct{}{}
	for _, smpl := range res {
		lbs := Labels{"alertname": r.name}
		for k, v := range smpl.Metric {
			lbs[k] = v
		}
		h := lbs.Hash()
		resultFPs[h] = struct{}{}
		if alert, ok := r.active[h]; ok && alert.State != StateInactive {
			alert.Value = smpl.V
			continue
		}
		r.active[h] = &Alert{Labels: lbs, ActiveAt: ts, State: StatePending, Value: smpl.V}
	}

	var vec Vector
	for fp, a := range r.active {
		if _, ok := resultFPs[fp]; !ok {
			delete(r.active, fp)
			continue
		}
		if a.State == StatePending && ts.Sub(a.ActiveAt) >= r.holdDuration {
			a.State = StateFiring
		}
		vec = append(vec, Sample{Metric: a.Labels, V: 1})
	}

	r.SetHealth(HealthGood)
	r.SetLastError(err)
	return vec, nil
}

// Group is a set of rules that are evaluated together (rules.Group).
type Group struct {
	name      string
	rules     []Rule
	queryFunc QueryFunc
	notify    func(alerts Vector)
}

func (g *Group) Eval(ctx context.Context, ts time.Time) {
	for _, rule := range g.rules {
		vector, err := rule.Eval(ctx, ts, g.queryFunc)
		if err != nil {
			continue
		}
		if _, ok := rule.(*AlertingRule); ok {
			g.notify(vector)
		}
	}
}

func TestB100promrulehealth(t *testing.T) {
	rule := &AlertingRule{name: "HighErrorRate", vector: `rate(errors_total[5m]) > 0.5`, active: map[uint64]*Alert{}, health: HealthUnknown}
	query := func(context.Context, string, time.Time) (Vector, error) {
		return Vector{{Metric: Labels{"job": "api", "instance": "a:9090"}, V: 0.9}}, nil
	}
	sent := 0
	g := &Group{name: "api.rules", rules: []Rule{rule}, queryFunc: query, notify: func(v Vector) { sent += len(v) }}

	evaluated := make(chan struct{})
	go func() { // Group.run: one evaluation tick
		g.Eval(context.Background(), time.Now())
		close(evaluated)
	}()
	<-evaluated
	// The rules page reads the rule state afterwards.
	if rule.Health() != HealthGood || rule.LastError() != nil || sent != 1 {
		t.Fatalf("health=%s err=%v sent=%d", rule.Health(), rule.LastError(), sent)
	}
}
