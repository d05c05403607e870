// Project: pingcap/tiflow (TiCDC), master before v8.5.0, December 2024.
// Files: cdc/entry/schema/snapshot.go (Snapshot.Copy, SchemaByTableID, PhysicalTableByID,
// SchemaByID, HandleDDL, DoHandleDDL and the unexported snapshot it wraps) and
// cdc/entry/schema_storage.go (schemaStorage.HandleDDLJob, GetLastSnapshot).
// Issue pingcap/tiflow#11884, fixed by PR pingcap/tiflow#11886
// "snapshot(ticdc): fix ddl puller and ddl manager stuck caused by two dead lock".
//
// Snapshot guards its inner snapshot with a *sync.RWMutex, and Copy hands the same pointer to the
// new snapshot, so every version kept by the schema storage shares one RWMutex. Each exported
// getter read-locks it, and some exported getters were written in terms of other exported getters:
// SchemaByTableID read-locks s.rwlock and then calls PhysicalTableByID and SchemaByID, each of which
// read-locks s.rwlock again. When the DDL puller applies a DDL job (schemaStorage.HandleDDLJob ->
// Copy -> HandleDDL -> DoHandleDDL, which write-locks the shared RWMutex) between the owner's outer
// and inner read locks, the writer waits for the outer reader and the inner RLock waits for the
// writer: the DDL manager and the DDL puller are both stuck. The fix (PR description: "refactors
// lock usage patterns to avoid recursive read locking") makes the nested lookups use the unlocked
// inner snapshot under the single outer read lock.
//
// This is the fixed version: SchemaByTableID read-locks once and uses s.inner directly.
package main

import (
	"fmt"
	"sync"
	"time"
)

type DBInfo struct {
	ID   int64
	Name string
}

type TableInfo struct {
	ID       int64
	SchemaID int64
	Name     string
}

type Job struct {
	Type     string
	SchemaID int64
	TableID  int64
	Table    *TableInfo
	FinishTs uint64
}

// snapshot is the unlocked versioned view (btrees of versioned IDs in TiCDC).
type snapshot struct {
	schemas   map[int64]*DBInfo
	tables    map[int64]*TableInfo
	currentTs uint64
}

func (s *snapshot) physicalTableByID(id int64) (*TableInfo, bool) {
	// Walks the versioned tables tree back from currentTs; large clusters hold many versions.
	time.Sleep(100 * time.Millisecond)
	t, ok := s.tables[id]
	return t, ok
}

func (s *snapshot) schemaByID(id int64) (*DBInfo, bool) {
	d, ok := s.schemas[id]
	return d, ok
}

func (s *snapshot) createTable(t *TableInfo, ts uint64) {
	tables := make(map[int64]*TableInfo, len(s.tables)+1)
	for k, v := range s.tables {
		tables[k] = v
	}
	tables[t.ID] = t
	s.tables = tables
	s.currentTs = ts
}

type Snapshot struct {
	inner  snapshot
	rwlock *sync.RWMutex
}

func (s *Snapshot) Copy() *Snapshot {
	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	return &Snapshot{inner: s.inner, rwlock: s.rwlock}
}

func (s *Snapshot) PhysicalTableByID(id int64) (*TableInfo, bool) {
	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	return s.inner.physicalTableByID(id)
}

func (s *Snapshot) SchemaByID(id int64) (*DBInfo, bool) {
	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	return s.inner.schemaByID(id)
}

func (s *Snapshot) SchemaByTableID(tableID int64) (*DBInfo, bool) {
	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	tableInfo, ok := s.inner.physicalTableByID(tableID)
	if !ok {
		return nil, false
	}
	return s.inner.schemaByID(tableInfo.SchemaID)
}

func (s *Snapshot) HandleDDL(job *Job) error {
	return s.DoHandleDDL(job)
}

func (s *Snapshot) DoHandleDDL(job *Job) error {
	s.rwlock.Lock()
	defer s.rwlock.Unlock()
	switch job.Type {
	case "create table":
		s.inner.createTable(job.Table, job.FinishTs)
	default:
		return fmt.Errorf("unsupported job %q", job.Type)
	}
	return nil
}

type schemaStorage struct {
	snapsMu sync.RWMutex
	snaps   []*Snapshot
}

func (s *schemaStorage) GetLastSnapshot() *Snapshot {
	s.snapsMu.RLock()
	defer s.snapsMu.RUnlock()
	return s.snaps[len(s.snaps)-1]
}

func (s *schemaStorage) HandleDDLJob(job *Job) error {
	lastSnap := s.GetLastSnapshot()
	snap := lastSnap.Copy()
	if err := snap.HandleDDL(job); err != nil {
		return err
	}
	s.snapsMu.Lock()
	s.snaps = append(s.snaps, snap)
	s.snapsMu.Unlock()
	return nil
}

func main() {
	first := &Snapshot{rwlock: new(sync.RWMutex), inner: snapshot{
		schemas: map[int64]*DBInfo{2: {ID: 2, Name: "test"}},
		tables:  map[int64]*TableInfo{104: {ID: 104, SchemaID: 2, Name: "t1"}},
	}}
	storage := &schemaStorage{snaps: []*Snapshot{first}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the owner's DDL manager resolves the schema of a replicated table
		defer wg.Done()
		if db, ok := storage.GetLastSnapshot().SchemaByTableID(104); ok {
			fmt.Println("table 104 is in schema", db.Name)
		}
	}()
	go func() { // the DDL puller applies a CREATE TABLE job
		defer wg.Done()
		time.Sleep(30 * time.Millisecond)
		job := &Job{Type: "create table", SchemaID: 2, TableID: 105, Table: &TableInfo{ID: 105, SchemaID: 2, Name: "t2"}, FinishTs: 450}
		if err := storage.HandleDDLJob(job); err != nil {
			fmt.Println(err)
		}
	}()
	wg.Wait()
	fmt.Println("snapshots:", len(storage.snaps))
}
