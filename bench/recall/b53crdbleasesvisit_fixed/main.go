// Fixed twin (leases are copied out of VisitLeases before privilege checks, as in #119305).
// Project: cockroachdb/cockroach v23.1/v23.2.
// Files: pkg/sql/crdb_internal.go (crdb_internal.leases populate), pkg/sql/catalog/lease/lease.go (Manager.VisitLeases,
// Acquire, findDescriptorState, descriptorState.findForTimestamp), pkg/sql/authorization.go (planner.HasAnyPrivilege,
// MemberOfWithAdminOption, MembershipCache), pkg/sql/catalog/descs (Collection leased descriptors).
// Issues: cockroachdb/cockroach#119253, #97280. Fix: cockroachdb/cockroach#119305 "sql: crdb_internal.leases
// could cause a deadlock with the lease manager" (23.1 backport #119374).
//
// crdb_internal.leases calls lease.Manager.VisitLeases with a closure; VisitLeases holds m.mu (and each
// descriptorState's mu) for the whole walk. The closure filtered rows by privilege, and HasAnyPrivilege reaches
// the role membership cache, which validates itself against the leased system.role_members descriptor. When
// that lease is not cached in the collection (e.g. allow_role_memberships_to_change_during_transaction, or a
// renewal), Manager.Acquire runs and findDescriptorState locks m.mu again on the same goroutine. The fix copies
// the leases out inside VisitLeases and checks privileges afterwards.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

type ID int

const RoleMembersTableID ID = 23

type Descriptor struct {
	ID      ID
	Name    string
	Version int
}

type storedLease struct{ expiration time.Time }
type descriptorVersionState struct {
	Descriptor
	mu struct {
		sync.Mutex
		lease    *storedLease
		refcount int
	}
}

type descriptorState struct {
	m  *Manager
	id ID
	mu struct {
		sync.Mutex
		active       []*descriptorVersionState
		takenOffline bool
	}
}

type Manager struct {
	mu struct {
		sync.Mutex
		descriptors map[ID]*descriptorState
	}
	storage map[ID]Descriptor // what a lease acquisition would read from system.descriptor
}

// VisitLeases introspects the state of leases managed by the Manager.
func (m *Manager) VisitLeases(f func(desc Descriptor, takenOffline bool, refCount int, expiration time.Time) (wantMore bool)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ts := range m.mu.descriptors {
		visitor := func() (wantMore bool) {
			ts.mu.Lock()
			defer ts.mu.Unlock()
			takenOffline := ts.mu.takenOffline
			for _, state := range ts.mu.active {
				state.mu.Lock()
				lease, refCount := state.mu.lease, state.mu.refcount
				state.mu.Unlock()
				if lease == nil {
					continue
				}
				if !f(state.Descriptor, takenOffline, refCount, lease.expiration) {
					return false
				}
			}
			return true
		}
		if !visitor() {
			return
		}
	}
}

func (m *Manager) Acquire(ctx context.Context, timestamp time.Time, id ID) (Descriptor, error) {
	return m.findDescriptorState(id, true /* create */).findForTimestamp(ctx, timestamp)
}

func (m *Manager) findDescriptorState(id ID, create bool) *descriptorState {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.mu.descriptors[id]
	if t == nil && create {
		t = &descriptorState{m: m, id: id}
		m.mu.descriptors[id] = t
	}
	return t
}

func (t *descriptorState) findForTimestamp(ctx context.Context, ts time.Time) (Descriptor, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := len(t.mu.active); n > 0 {
		return t.mu.active[n-1].Descriptor, nil
	}
	desc := t.m.storage[t.id]
	s := &descriptorVersionState{Descriptor: desc}
	s.mu.lease = &storedLease{expiration: ts.Add(5 * time.Minute)}
	t.mu.active = append(t.mu.active, s)
	return desc, nil
}

type Collection struct {
	lm     *Manager
	leased map[ID]Descriptor
}

func (tc *Collection) GetLeasedImmutableTableByID(ctx context.Context, id ID) (Descriptor, error) {
	if d, ok := tc.leased[id]; ok {
		return d, nil
	}
	d, err := tc.lm.Acquire(ctx, time.Now() /* txn read timestamp */, id)
	if err == nil {
		tc.leased[id] = d
	}
	return d, err
}

type MembershipCache struct {
	tableVersion int
	userCache    map[string]map[string]bool
}

func (c *MembershipCache) GetRolesForMember(ctx context.Context, descs *Collection, member string) (map[string]bool, error) {
	// Validate the cache against the current version of system.role_members.
	tableDesc, err := descs.GetLeasedImmutableTableByID(ctx, RoleMembersTableID)
	if err != nil {
		return nil, err
	}
	if tableDesc.Version != c.tableVersion || c.userCache == nil {
		c.tableVersion, c.userCache = tableDesc.Version, map[string]map[string]bool{}
	}
	if c.userCache[member] == nil {
		c.userCache[member] = map[string]bool{"public": true} // read from system.role_members
	}
	return c.userCache[member], nil
}

type planner struct {
	user      string
	leaseMgr  *Manager
	descs     *Collection
	roleCache *MembershipCache
}

func (p *planner) MemberOfWithAdminOption(ctx context.Context, member string) (map[string]bool, error) {
	return p.roleCache.GetRolesForMember(ctx, p.descs, member)
}

func (p *planner) HasAnyPrivilege(ctx context.Context, desc Descriptor) (bool, error) {
	memberOf, err := p.MemberOfWithAdminOption(ctx, p.user) // plus the descriptor's privileges
	return err == nil && memberOf["public"], err
}

func populateLeases(ctx context.Context, p *planner, addRow func(...interface{}) error) (err error) {
	var rows [][]interface{}
	p.leaseMgr.VisitLeases(func(desc Descriptor, takenOffline bool, _ int, expiration time.Time) (wantMore bool) {
		rows = append(rows, []interface{}{1 /* nodeID */, desc.ID, desc.Name, expiration, takenOffline, desc})
		return true
	})
	for _, row := range rows {
		if ok, err := p.HasAnyPrivilege(ctx, row[5].(Descriptor)); err != nil {
			return err
		} else if ok {
			if err := addRow(row[:5]...); err != nil {
				return err
			}
		}
	}
	return nil
}

func main() {
	ctx := context.Background()
	lm := &Manager{storage: map[ID]Descriptor{
		104:                {ID: 104, Name: "orders", Version: 3},
		RoleMembersTableID: {ID: RoleMembersTableID, Name: "role_members", Version: 7},
	}}
	lm.mu.descriptors = map[ID]*descriptorState{}
	lm.Acquire(ctx, time.Now(), 104) // an earlier query leased "orders"
	p := &planner{user: "app", leaseMgr: lm, roleCache: &MembershipCache{},
		descs: &Collection{lm: lm, leased: map[ID]Descriptor{}}}
	err := populateLeases(ctx, p, func(row ...interface{}) error { fmt.Println("row:", row[:3]); return nil })
	fmt.Println("SELECT * FROM crdb_internal.leases done, err:", err)
}
