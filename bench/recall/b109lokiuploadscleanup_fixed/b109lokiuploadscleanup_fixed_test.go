// Project: grafana/loki (pkg/storage/stores/shipper/uploads/table.go and table_manager.go), boltdb-shipper in Loki 1.6 (2020, approximate).
// Bug: Table.Cleanup takes dbsMtx.RLock and, while looping over the dbs, returns the os.Stat error without releasing the read lock. When a local db file disappears after its upload, the read lock leaks and the next write to a new shard blocks forever in getOrAddDB on dbsMtx.Lock.
package b109lokiuploadscleanupfixed

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

const shardDBsByDuration = 15 * time.Minute

// boltDB stands in for *bbolt.DB.
type boltDB struct{ path string }

func (db *boltDB) Path() string { return db.path }

type StorageClient interface {
	PutObject(objectKey string, localPath string) error
}

type Table struct {
	name          string
	path          string
	storageClient StorageClient

	dbs    map[string]*boltDB
	dbsMtx sync.RWMutex

	uploadedDBsMtime    map[string]time.Time
	uploadedDBsMtimeMtx sync.RWMutex
}

func NewTable(path string, storageClient StorageClient) *Table {
	return &Table{
		name:             filepath.Base(path),
		path:             path,
		storageClient:    storageClient,
		dbs:              map[string]*boltDB{},
		uploadedDBsMtime: map[string]time.Time{},
	}
}

func (lt *Table) getOrAddDB(name string) (*boltDB, error) {
	lt.dbsMtx.RLock()
	db, ok := lt.dbs[name]
	lt.dbsMtx.RUnlock()
	if ok {
		return db, nil
	}

	lt.dbsMtx.Lock()
	defer lt.dbsMtx.Unlock()
	if db, ok = lt.dbs[name]; ok {
		return db, nil
	}
	db = &boltDB{path: filepath.Join(lt.path, name)}
	if err := os.WriteFile(db.path, []byte("boltdb"), 0o644); err != nil {
		return nil, err
	}
	lt.dbs[name] = db
	return db, nil
}

func (lt *Table) Write(tm time.Time) error {
	shard := fmt.Sprint(tm.Truncate(shardDBsByDuration).Unix())
	_, err := lt.getOrAddDB(shard)
	return err
}

func (lt *Table) Upload() error {
	lt.dbsMtx.RLock()
	defer lt.dbsMtx.RUnlock()
	for name, db := range lt.dbs {
		stat, err := os.Stat(db.Path())
		if err != nil {
			return err
		}
		lt.uploadedDBsMtimeMtx.RLock()
		uploadedMtime, ok := lt.uploadedDBsMtime[name]
		lt.uploadedDBsMtimeMtx.RUnlock()
		if ok && !stat.ModTime().After(uploadedMtime) {
			continue
		}
		if err := lt.storageClient.PutObject(lt.name+"/"+name, db.Path()); err != nil {
			return err
		}
		lt.uploadedDBsMtimeMtx.Lock()
		lt.uploadedDBsMtime[name] = stat.ModTime()
		lt.uploadedDBsMtimeMtx.Unlock()
	}
	return nil
}

// Cleanup removes dbs which are already uploaded and not modified since.
func (lt *Table) Cleanup() error {
	var filesToCleanup []string
	lt.dbsMtx.RLock()
	for name, db := range lt.dbs {
		stat, err := os.Stat(db.Path())
		if err != nil {
			lt.dbsMtx.RUnlock()
			return err
		}
		lt.uploadedDBsMtimeMtx.RLock()
		uploadedMtime, ok := lt.uploadedDBsMtime[name]
		lt.uploadedDBsMtimeMtx.RUnlock()
		if ok && !stat.ModTime().After(uploadedMtime) {
			filesToCleanup = append(filesToCleanup, name)
		}
	}
	lt.dbsMtx.RUnlock()

	for _, name := range filesToCleanup {
		lt.RemoveDB(name)
	}
	return nil
}

func (lt *Table) RemoveDB(name string) {
	lt.dbsMtx.Lock()
	defer lt.dbsMtx.Unlock()
	if db, ok := lt.dbs[name]; ok {
		_ = os.Remove(db.Path())
		delete(lt.dbs, name)
	}
}

type TableManager struct {
	storageClient StorageClient
	dir           string
	tables        map[string]*Table
	tablesMtx     sync.RWMutex
	errs          []error
}

func (tm *TableManager) getOrCreateTable(name string) *Table {
	tm.tablesMtx.RLock()
	table, ok := tm.tables[name]
	tm.tablesMtx.RUnlock()
	if ok {
		return table
	}
	tm.tablesMtx.Lock()
	defer tm.tablesMtx.Unlock()
	if table, ok = tm.tables[name]; !ok {
		table = NewTable(filepath.Join(tm.dir, name), tm.storageClient)
		_ = os.MkdirAll(table.path, 0o755)
		tm.tables[name] = table
	}
	return table
}

func (tm *TableManager) BatchWrite(tableName string, ts time.Time) error {
	return tm.getOrCreateTable(tableName).Write(ts)
}

func (tm *TableManager) uploadTables() {
	tm.tablesMtx.RLock()
	defer tm.tablesMtx.RUnlock()
	for _, table := range tm.tables {
		if err := table.Upload(); err != nil {
			tm.errs = append(tm.errs, err)
			continue
		}
		if err := table.Cleanup(); err != nil {
			tm.errs = append(tm.errs, err) // level.Error(...).Log(...)
		}
	}
}

// deletingStorage uploads the file and then the local copy vanishes, the way
// a concurrent retention/compaction job removes it from disk.
type deletingStorage struct{}

func (deletingStorage) PutObject(_ string, localPath string) error {
	return os.Remove(localPath)
}

func TestB109lokiuploadscleanupFixed(t *testing.T) {
	tm := &TableManager{storageClient: deletingStorage{}, dir: t.TempDir(), tables: map[string]*Table{}}
	now := time.Unix(1600000000, 0)
	if err := tm.BatchWrite("index_18500", now); err != nil {
		t.Fatal(err)
	}
	tm.uploadTables()
	if err := tm.BatchWrite("index_18500", now.Add(shardDBsByDuration)); err != nil {
		t.Fatal(err)
	}
}
