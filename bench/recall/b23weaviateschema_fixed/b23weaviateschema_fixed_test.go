// Project: weaviate/weaviate (usecases/schema)
// Bug: Manager.GetClass held the schema RWMutex for reading and then called
// ShardingState, which takes the read lock again; when a schema update
// (AddClass) queued for the write lock in between, the nested RLock blocked
// behind the writer and the writer waited on the outer RLock.
// Fix: use an unexported shardingStateLocked helper under the outer lock
// instead of re-entering the public, locking method.
package b23weaviateschema_fixed

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

type Class struct {
	Class             string
	Properties        []string
	VectorIndexType   string
	ReplicationFactor int
}

type ShardingState struct {
	IndexID  string
	Physical map[string][]string
}

func (s *ShardingState) AllPhysicalShards() []string {
	out := make([]string, 0, len(s.Physical))
	for name := range s.Physical {
		out = append(out, name)
	}
	return out
}

type State struct {
	ObjectSchema  map[string]*Class
	ShardingState map[string]*ShardingState
}

type Manager struct {
	sync.RWMutex
	schema        State
	logger        func(format string, args ...any)
	migrator      func(class *Class) error
	classAccessed func(name string)
}

func NewManager() *Manager {
	return &Manager{
		schema: State{
			ObjectSchema:  map[string]*Class{},
			ShardingState: map[string]*ShardingState{},
		},
		logger:   func(string, ...any) {},
		migrator: func(*Class) error { return nil },
	}
}

func (m *Manager) ShardingState(class string) *ShardingState {
	m.RLock()
	defer m.RUnlock()
	return m.shardingStateLocked(class)
}

func (m *Manager) shardingStateLocked(class string) *ShardingState {
	return m.schema.ShardingState[class]
}

type ClassInfo struct {
	Class  *Class
	Shards []string
}

func (m *Manager) GetClass(name string) (*ClassInfo, error) {
	m.RLock()
	defer m.RUnlock()
	c, ok := m.schema.ObjectSchema[name]
	if !ok {
		return nil, fmt.Errorf("class %q not found", name)
	}
	if m.classAccessed != nil {
		m.classAccessed(name)
	}
	ss := m.shardingStateLocked(name)
	if ss == nil {
		return nil, errors.New("sharding state missing")
	}
	return &ClassInfo{Class: c, Shards: ss.AllPhysicalShards()}, nil
}

func (m *Manager) AddClass(c *Class) error {
	m.Lock()
	defer m.Unlock()
	if _, ok := m.schema.ObjectSchema[c.Class]; ok {
		return fmt.Errorf("class %q already exists", c.Class)
	}
	if err := m.migrator(c); err != nil {
		return err
	}
	m.schema.ObjectSchema[c.Class] = c
	m.schema.ShardingState[c.Class] = &ShardingState{
		IndexID:  c.Class,
		Physical: map[string][]string{"shard-0": {"node-1"}},
	}
	m.logger("added class %s", c.Class)
	return nil
}

func (m *Manager) ClassNames() []string {
	m.RLock()
	defer m.RUnlock()
	names := make([]string, 0, len(m.schema.ObjectSchema))
	for n := range m.schema.ObjectSchema {
		names = append(names, n)
	}
	return names
}

func TestProbe(t *testing.T) {
	m := NewManager()
	if err := m.AddClass(&Class{Class: "Article", VectorIndexType: "hnsw", ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
	reading := make(chan struct{})
	m.classAccessed = func(name string) {
		close(reading)
		time.Sleep(50 * time.Millisecond)
	}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		info, err := m.GetClass("Article")
		if err != nil {
			t.Error(err)
			return
		}
		t.Logf("shards: %v", info.Shards)
	}()
	go func() {
		defer wg.Done()
		<-reading
		if err := m.AddClass(&Class{Class: "Author", VectorIndexType: "flat"}); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
}
