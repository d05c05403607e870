// Project: VictoriaMetrics (app/vmalert/manager.go), vmalert v1.5x to v1.7x (2021-2022, approximate).
// Bug: manager.update holds groupsMu.Lock while it starts the new groups and returns the error of startGroup (a failed Group.Restore from remote read) without unlocking groupsMu. Every later user of the manager, such as the /api/v1/alerts handler (AlertAPI, groupsMu.RLock) or the next config reload (update, groupsMu.Lock), blocks forever.
package b109vmalertupdateleakfixed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

var remoteReadIgnoreRestoreErrors = false

const remoteReadLookBack = time.Hour

// datasource.QuerierBuilder used by Group.Restore.
type QuerierBuilder interface {
	BuildWithParams() Querier
}

type Querier interface {
	Query(ctx context.Context, query string) ([]float64, error)
}

type Rule interface {
	ID() uint64
	Restore(ctx context.Context, q Querier, lookback time.Duration, labels map[string]string) error
}

type AlertingRule struct {
	RuleID uint64
	Name   string
	alerts map[uint64]string
}

func (ar *AlertingRule) ID() uint64 { return ar.RuleID }

func (ar *AlertingRule) Restore(ctx context.Context, q Querier, lookback time.Duration, _ map[string]string) error {
	_, err := q.Query(ctx, fmt.Sprintf("last_over_time(ALERTS_FOR_STATE{alertname=%q}[%s])", ar.Name, lookback))
	return err
}

type Group struct {
	Name  string
	File  string
	Rules []Rule
	done  chan struct{}
}

func (g *Group) ID() uint64 { return uint64(len(g.File))<<32 | uint64(len(g.Name)) }

func (g *Group) Restore(ctx context.Context, qb QuerierBuilder, lookback time.Duration, labels map[string]string) error {
	for _, rule := range g.Rules {
		if err := rule.Restore(ctx, qb.BuildWithParams(), lookback, labels); err != nil {
			return fmt.Errorf("error while restoring rule %d: %w", rule.ID(), err)
		}
	}
	return nil
}

func (g *Group) start(_ context.Context) { <-g.done }
func (g *Group) close()                  { close(g.done) }

type manager struct {
	rr     QuerierBuilder
	labels map[string]string
	wg     sync.WaitGroup

	groupsMu sync.RWMutex
	groups   map[uint64]*Group
}

func (m *manager) start(ctx context.Context, groupsCfg []*Group) error {
	return m.update(ctx, groupsCfg, true)
}

func (m *manager) startGroup(ctx context.Context, group *Group, restore bool) error {
	if restore && m.rr != nil {
		err := group.Restore(ctx, m.rr, remoteReadLookBack, m.labels)
		if err != nil {
			if !remoteReadIgnoreRestoreErrors {
				return fmt.Errorf("failed to restore state for group %q: %w", group.Name, err)
			}
		}
	}
	m.wg.Add(1)
	id := group.ID()
	go func() {
		defer m.wg.Done()
		group.start(ctx)
	}()
	m.groups[id] = group
	return nil
}

func (m *manager) update(ctx context.Context, groupsCfg []*Group, restore bool) error {
	groupsRegistry := make(map[uint64]*Group)
	for _, ng := range groupsCfg {
		groupsRegistry[ng.ID()] = ng
	}

	m.groupsMu.Lock()
	for _, og := range m.groups {
		if _, ok := groupsRegistry[og.ID()]; !ok {
			og.close()
			delete(m.groups, og.ID())
		} else {
			delete(groupsRegistry, og.ID())
		}
	}
	for _, ng := range groupsRegistry {
		if err := m.startGroup(ctx, ng, restore); err != nil {
			m.groupsMu.Unlock()
			return err
		}
	}
	m.groupsMu.Unlock()
	return nil
}

// AlertAPI is used by the /api/v1/alert handler.
func (m *manager) AlertAPI(gID, aID uint64) (string, error) {
	m.groupsMu.RLock()
	defer m.groupsMu.RUnlock()
	g, ok := m.groups[gID]
	if !ok {
		return "", fmt.Errorf("can't find group with id %d", gID)
	}
	return fmt.Sprintf("%s/%d", g.Name, aID), nil
}

func (m *manager) close() {
	m.groupsMu.Lock()
	for _, g := range m.groups {
		g.close()
	}
	m.groupsMu.Unlock()
	m.wg.Wait()
}

type failingRemoteRead struct{}

func (failingRemoteRead) BuildWithParams() Querier { return failingRemoteRead{} }
func (failingRemoteRead) Query(context.Context, string) ([]float64, error) {
	return nil, errors.New("remote read: 503 Service Unavailable")
}

func TestB109vmalertupdateleakFixed(t *testing.T) {
	m := &manager{rr: failingRemoteRead{}, groups: map[uint64]*Group{}}
	g := &Group{Name: "alerts", File: "rules.yml", done: make(chan struct{}),
		Rules: []Rule{&AlertingRule{RuleID: 1, Name: "InstanceDown"}}}
	if err := m.start(context.Background(), []*Group{g}); err == nil {
		t.Fatal("expected restore error")
	}
	if _, err := m.AlertAPI(g.ID(), 1); err == nil {
		t.Fatal("group should not be registered")
	}
	m.close()
}
