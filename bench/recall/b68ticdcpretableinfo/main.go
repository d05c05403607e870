// Shape of TiCDC (pingcap/tiflow) issue #11884, fixed by PR #11886
// ("fix ddl puller and ddl manager stuck caused by two dead lock").
//
// A schema Snapshot is copied for every DDL, and the copy shares the
// original's *sync.RWMutex. The DDL manager asks an older snapshot for
// PreTableInfo, which read-locks the snapshot and then calls the exported
// PhysicalTableByID, which read-locks again. Meanwhile the DDL puller applies
// the next DDL to a fresh copy: DoHandleDDL write-locks the shared mutex and
// waits for the outer read lock, and the inner read lock waits behind it.
package main

import (
	"fmt"
	"log"
	"sync"
	"time"
)

type ActionType int

const (
	ActionCreateTable ActionType = iota
	ActionDropTable
	ActionTruncateTable
)

type TableInfo struct {
	ID       int64
	SchemaID int64
	Name     string
}

type Job struct {
	Type       ActionType
	SchemaID   int64
	SchemaName string
	TableID    int64
	FinishedTS uint64
	TableInfo  *TableInfo
}

// snapshot is the unlocked inner state.
type snapshot struct {
	schemas   map[int64]string
	tables    map[int64]*TableInfo
	currentTs uint64
}

func (s *snapshot) clone() snapshot {
	n := snapshot{schemas: map[int64]string{}, tables: map[int64]*TableInfo{}, currentTs: s.currentTs}
	for k, v := range s.schemas {
		n.schemas[k] = v
	}
	for k, v := range s.tables {
		n.tables[k] = v
	}
	return n
}

func (s *snapshot) physicalTableByID(id int64) (*TableInfo, bool) {
	t, ok := s.tables[id]
	return t, ok
}
func (s *snapshot) schemaByID(id int64) (string, bool) { n, ok := s.schemas[id]; return n, ok }

// Snapshot stores the schema information; its public methods are thread-safe.
type Snapshot struct {
	inner  snapshot
	rwlock *sync.RWMutex
}

// Copy creates a new snapshot that shares the lock with the old one.
func (s *Snapshot) Copy() *Snapshot {
	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	return &Snapshot{inner: s.inner.clone(), rwlock: s.rwlock}
}

func (s *Snapshot) PhysicalTableByID(id int64) (*TableInfo, bool) {
	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	return s.inner.physicalTableByID(id)
}

func (s *Snapshot) SchemaByID(id int64) (string, bool) {
	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	return s.inner.schemaByID(id)
}

// PreTableInfo returns the table info which will be overwritten by the job.
func (s *Snapshot) PreTableInfo(job *Job) (*TableInfo, error) {
	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	switch job.Type {
	case ActionCreateTable:
		return nil, nil
	case ActionDropTable, ActionTruncateTable:
		logDebug("get pre table info", job.TableID)
		table, ok := s.PhysicalTableByID(job.TableID)
		if !ok {
			return nil, fmt.Errorf("table %d not found", job.TableID)
		}
		return table, nil
	}
	return nil, nil
}

// FillSchemaName fills the schema name in the ddl job.
func (s *Snapshot) FillSchemaName(job *Job) error {
	s.rwlock.RLock()
	defer s.rwlock.RUnlock()
	name, ok := s.SchemaByID(job.SchemaID)
	if !ok {
		return fmt.Errorf("schema %d not found", job.SchemaID)
	}
	job.SchemaName = name
	return nil
}

func (s *Snapshot) HandleDDL(job *Job) error {
	if err := s.FillSchemaName(job); err != nil {
		return err
	}
	return s.DoHandleDDL(job)
}

func (s *Snapshot) DoHandleDDL(job *Job) error {
	s.rwlock.Lock()
	defer s.rwlock.Unlock()
	switch job.Type {
	case ActionCreateTable:
		s.inner.tables[job.TableInfo.ID] = job.TableInfo
	case ActionDropTable:
		delete(s.inner.tables, job.TableID)
	}
	s.inner.currentTs = job.FinishedTS
	return nil
}

// logDebug stands in for a zap logger writing to a slow disk.
func logDebug(msg string, v ...any) {
	time.Sleep(40 * time.Millisecond)
	log.Println(append([]any{msg}, v...)...)
}

type schemaStorage struct {
	mu    sync.RWMutex
	snaps []*Snapshot
}

func (st *schemaStorage) GetSnapshot(ts uint64) *Snapshot {
	st.mu.RLock()
	defer st.mu.RUnlock()
	for i := len(st.snaps) - 1; i >= 0; i-- {
		if st.snaps[i].inner.currentTs <= ts {
			return st.snaps[i]
		}
	}
	return st.snaps[0]
}

// HandleDDLJob is called by the DDL puller for each new DDL.
func (st *schemaStorage) HandleDDLJob(job *Job) error {
	st.mu.RLock()
	last := st.snaps[len(st.snaps)-1]
	st.mu.RUnlock()
	snap := last.Copy()
	if err := snap.HandleDDL(job); err != nil {
		return err
	}
	st.mu.Lock()
	st.snaps = append(st.snaps, snap)
	st.mu.Unlock()
	return nil
}

func main() {
	base := &Snapshot{rwlock: new(sync.RWMutex), inner: snapshot{schemas: map[int64]string{1: "test"},
		tables: map[int64]*TableInfo{10: {ID: 10, SchemaID: 1, Name: "t1"}}, currentTs: 100}}
	storage := &schemaStorage{snaps: []*Snapshot{base}}

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // ddl manager building the DDL event for DROP TABLE t1
		defer wg.Done()
		drop := &Job{Type: ActionDropTable, SchemaID: 1, TableID: 10, FinishedTS: 110}
		pre, err := storage.GetSnapshot(105).PreTableInfo(drop)
		fmt.Println("pre table info:", pre, err)
	}()
	go func() { // ddl puller applying CREATE TABLE t2
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		create := &Job{Type: ActionCreateTable, SchemaID: 1, FinishedTS: 120,
			TableInfo: &TableInfo{ID: 11, SchemaID: 1, Name: "t2"}}
		fmt.Println("handle ddl:", storage.HandleDDLJob(create))
	}()
	wg.Wait()
}
