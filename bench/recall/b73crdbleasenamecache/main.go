// Project: cockroachdb/cockroach (sql/lease.go), mid-2016 (GoBench cockroach#7504, approximate).
// Bug: tableState.release holds t.mu and the LeaseState's mu while it removes a dereferenced lease, and removeLease takes the tableNameCache mu, whereas tableNameCache.get (AcquireByName) holds the name cache mu and then locks the lease's mu, so a release racing with an acquire by name deadlocks (lease.mu vs nameCache.mu inversion).
package main

import (
	"fmt"
	"sync"
	"time"
)

type ID uint32
type DescriptorVersion uint32

type TableDescriptor struct {
	ID       ID
	ParentID ID
	Name     string
	Version  DescriptorVersion
}

// LeaseState holds the state for a lease. Exported only for testing.
type LeaseState struct {
	TableDescriptor
	expiration time.Time
	mu         sync.Mutex // protects refcount and released
	refcount   int
	released   bool
}

func (s *LeaseState) hasSomeLifeLeft(now time.Time) bool {
	return s.expiration.Sub(now) > time.Second
}

type leaseSet struct{ data []*LeaseState }

func (l *leaseSet) insert(s *LeaseState) { l.data = append(l.data, s) }

func (l *leaseSet) find(version DescriptorVersion, expiration time.Time) *LeaseState {
	for _, s := range l.data {
		if s.Version == version && s.expiration.Equal(expiration) {
			return s
		}
	}
	return nil
}

func (l *leaseSet) findNewest(version DescriptorVersion) *LeaseState {
	if len(l.data) == 0 {
		return nil
	}
	return l.data[len(l.data)-1]
}

func (l *leaseSet) remove(s *LeaseState) {
	for i, e := range l.data {
		if e == s {
			l.data = append(l.data[:i], l.data[i+1:]...)
			return
		}
	}
}

type LeaseStore struct {
	RemoveOnceDereferenced bool // testing knob
	released               chan ID
}

// Release removes the lease row from system.lease (asynchronously).
func (s LeaseStore) Release(lease *LeaseState) { s.released <- lease.ID }

type tableNameCacheKey struct {
	dbID ID
	name string
}

type tableNameCache struct {
	mu     sync.Mutex
	tables map[tableNameCacheKey]*LeaseState
}

// get returns a lease for the table, incrementing its refcount.
func (c *tableNameCache) get(dbID ID, tableName string, now time.Time) *LeaseState {
	c.mu.Lock()
	defer c.mu.Unlock()
	lease, ok := c.tables[tableNameCacheKey{dbID, tableName}]
	if !ok {
		return nil
	}
	lease.mu.Lock()
	defer lease.mu.Unlock()
	if !lease.hasSomeLifeLeft(now) || lease.released {
		return nil
	}
	lease.refcount++
	return lease
}

func (c *tableNameCache) insert(lease *LeaseState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tables[tableNameCacheKey{lease.ParentID, lease.Name}] = lease
}

func (c *tableNameCache) remove(lease *LeaseState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := tableNameCacheKey{lease.ParentID, lease.Name}
	if existing, ok := c.tables[key]; ok && existing == lease {
		delete(c.tables, key)
	}
}

type tableState struct {
	id             ID
	tableNameCache *tableNameCache
	mu             sync.Mutex // protects active and deleted
	active         leaseSet
	deleted        bool
}

func (t *tableState) release(lease *LeaseState, store LeaseStore) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.active.find(lease.Version, lease.expiration)
	if s == nil {
		return fmt.Errorf("table %d version %d not found", lease.ID, lease.Version)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refcount--
	removeOnceDereferenced := store.RemoveOnceDereferenced || s != t.active.findNewest(0) || t.deleted
	time.Sleep(20 * time.Millisecond) // widen the race window
	if s.refcount == 0 && removeOnceDereferenced {
		t.removeLease(s, store)
	}
	return nil
}

// removeLease removes a lease from the active set and the name cache.
// t.mu needs to be locked.
func (t *tableState) removeLease(lease *LeaseState, store LeaseStore) {
	t.active.remove(lease)
	t.tableNameCache.remove(lease)
	lease.released = true
	go store.Release(lease)
}

type LeaseManager struct {
	LeaseStore
	mu         sync.Mutex
	tables     map[ID]*tableState
	tableNames tableNameCache
}

func (m *LeaseManager) findTableState(id ID) *tableState {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tables[id]
	if t == nil {
		t = &tableState{id: id, tableNameCache: &m.tableNames}
		m.tables[id] = t
	}
	return t
}

func (m *LeaseManager) AcquireByName(dbID ID, tableName string) *LeaseState {
	return m.tableNames.get(dbID, tableName, time.Now())
}

func (m *LeaseManager) Release(lease *LeaseState) error {
	return m.findTableState(lease.ID).release(lease, m.LeaseStore)
}

func main() {
	m := &LeaseManager{
		LeaseStore: LeaseStore{RemoveOnceDereferenced: true, released: make(chan ID, 8)},
		tables:     map[ID]*tableState{},
		tableNames: tableNameCache{tables: map[tableNameCacheKey]*LeaseState{}},
	}
	lease := &LeaseState{
		TableDescriptor: TableDescriptor{ID: 51, ParentID: 50, Name: "kv", Version: 1},
		expiration:      time.Now().Add(5 * time.Minute),
		refcount:        1,
	}
	t := m.findTableState(lease.ID)
	t.active.insert(lease)
	m.tableNames.insert(lease)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // session A commits and releases its lease
		defer wg.Done()
		if err := m.Release(lease); err != nil {
			fmt.Println(err)
		}
	}()
	go func() { // session B resolves "kv" by name
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		if l := m.AcquireByName(50, "kv"); l != nil {
			fmt.Println("acquired lease by name, refcount", l.refcount)
		}
	}()
	wg.Wait()
	fmt.Println("done")
}
