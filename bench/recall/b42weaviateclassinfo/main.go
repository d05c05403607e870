// Project: weaviate/weaviate, v1.25 (schema replicated through RAFT).
// Files/functions: cluster/store/meta_class.go (metaClass.ClassInfo,
// metaClass.MultiTenancyConfig, metaClass.AddTenants), cluster/store/schema.go
// (schema.ClassInfo, schema.metaClass, schema.addTenants), cluster/store
// FSM apply of an AddTenants command, the read path that asks the schema for
// ClassInfo (the objects/batch handlers validating multi-tenancy).
// Issue #4957 "RAFT Deadlock on race condition on multi tenancy config read"
// (fixed in the 1.25 patch releases, ClassInfo no longer calls
// MultiTenancyConfig).
//
// metaClass embeds a sync.RWMutex. ClassInfo read-locks it for the whole
// function and fills ci.MultiTenancy by calling the exported
// MultiTenancyConfig, which read-locks the same mutex again. Adding tenants
// through RAFT applies an AddTenants command that write-locks the class's
// metaClass. If that writer arrives between ClassInfo's two read locks, it
// waits for the first one, the nested read lock waits behind the writer, and
// the RAFT apply loop is wedged; every schema write after it hangs. The fix
// reads m.Class.MultiTenancyConfig directly in ClassInfo.
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type MultiTenancyConfig struct {
	Enabled            bool
	AutoTenantCreation bool
}

type Property struct{ Name string }

type Class struct {
	Class              string
	Properties         []*Property
	MultiTenancyConfig *MultiTenancyConfig
}

type Physical struct{ BelongsToNodes []string }

type ShardingState struct{ Physical map[string]Physical }

type ClassInfo struct {
	Exists       bool
	MultiTenancy MultiTenancyConfig
	Properties   int
	Tenants      int
	ClassVersion uint64
	ShardVersion uint64
}

type AddTenantsRequest struct{ Tenants []string }

type metaClass struct {
	sync.RWMutex
	Class        Class
	ClassVersion uint64
	Sharding     ShardingState
	ShardVersion uint64
}

func (m *metaClass) ClassInfo() (ci ClassInfo) {
	if m == nil {
		return
	}
	m.RLock()
	defer m.RUnlock()
	ci.Exists = true
	ci.Properties = len(m.Class.Properties)
	time.Sleep(50 * time.Millisecond) // the reader is descheduled here
	ci.MultiTenancy = m.MultiTenancyConfig()
	ci.Tenants = len(m.Sharding.Physical)
	ci.ClassVersion = m.ClassVersion
	ci.ShardVersion = m.ShardVersion
	return ci
}

func (m *metaClass) MultiTenancyConfig() (cfg MultiTenancyConfig) {
	if m == nil {
		return
	}
	m.RLock()
	defer m.RUnlock()
	if m.Class.MultiTenancyConfig == nil {
		return
	}
	cfg = *m.Class.MultiTenancyConfig
	return
}

func (m *metaClass) AddTenants(nodeID string, req *AddTenantsRequest, v uint64) error {
	m.Lock()
	defer m.Unlock()
	for _, t := range req.Tenants {
		m.Sharding.Physical[t] = Physical{BelongsToNodes: []string{nodeID}}
	}
	m.ShardVersion = v
	return nil
}

var ErrClassNotFound = errors.New("class not found")

type schema struct {
	nodeID string
	sync.RWMutex
	Classes map[string]*metaClass
}

func (s *schema) metaClass(name string) *metaClass {
	s.RLock()
	defer s.RUnlock()
	return s.Classes[name]
}

// ClassInfo returns information about the class as seen by the local schema.
func (s *schema) ClassInfo(class string) ClassInfo {
	return s.metaClass(class).ClassInfo()
}

func (s *schema) addTenants(class string, v uint64, req *AddTenantsRequest) error {
	if meta := s.metaClass(class); meta != nil {
		return meta.AddTenants(s.nodeID, req, v)
	}
	return ErrClassNotFound
}

// Store is the RAFT finite state machine around the schema.
type Store struct{ db *schema }

type command struct {
	Class   string
	Index   uint64
	Request *AddTenantsRequest
}

// Apply is called by RAFT for each committed log entry.
func (st *Store) Apply(cmd command) error {
	return st.db.addTenants(cmd.Class, cmd.Index, cmd.Request)
}

// batchObjects validates a batch against the class's multi-tenancy setting.
func batchObjects(reader *schema, className string, tenant string) error {
	ci := reader.ClassInfo(className)
	if !ci.Exists {
		return ErrClassNotFound
	}
	if ci.MultiTenancy.Enabled && tenant == "" {
		return fmt.Errorf("class %s has multi-tenancy enabled, but request was without tenant", className)
	}
	return nil
}

func main() {
	db := &schema{nodeID: "node-1", Classes: map[string]*metaClass{
		"Article": {
			Class:    Class{Class: "Article", Properties: []*Property{{Name: "title"}}, MultiTenancyConfig: &MultiTenancyConfig{Enabled: true}},
			Sharding: ShardingState{Physical: map[string]Physical{}},
		},
	}}
	st := &Store{db: db}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		fmt.Println("batch:", batchObjects(db, "Article", "tenantA"))
	}()
	time.Sleep(20 * time.Millisecond)
	go func() {
		defer wg.Done()
		fmt.Println("apply:", st.Apply(command{Class: "Article", Index: 42, Request: &AddTenantsRequest{Tenants: []string{"tenantB"}}}))
	}()
	wg.Wait()
}
