// Project: cockroachdb/cockroach v2.1 (pkg/sql/database.go, pkg/sql/table.go; the KV layer reduced to per-key write intents)
// Issue: cockroachdb/cockroach#29090, fixed by PR #29291 "sql: resolve deadlock in waitForCacheState" (backport #30139)
//
// FIXED TWIN (PR #29291): waitForCacheState still holds dc.mu (line 115) while it
// evaluates the condition (line 117), but the condition now only consults the cache
// (getCachedDatabaseID, line 156) and never reads system.namespace, so it cannot wait
// on another transaction's intent (line 57). The CREATE transaction that wrote the
// intent (line 36) takes dc.mu in getDatabaseCache (line 108) once the
// wait returns, and commits.
package main

import (
	"fmt"
	"sync"
	"time"
)

type ID uint32

// ---- KV: one write intent per key; readers wait for the writer to resolve it ----

type intent struct {
	mu    sync.Mutex
	txnID string
}

type kvStore struct {
	mu      sync.Mutex
	data    map[string]ID
	intents map[string]*intent
}

func (kv *kvStore) putIntent(txnID, key string, val ID) *intent {
	kv.mu.Lock()
	in := &intent{txnID: txnID}
	in.mu.Lock()
	kv.intents[key] = in
	kv.data[key] = val
	kv.mu.Unlock()
	return in
}

func (kv *kvStore) resolveIntent(key string) {
	kv.mu.Lock()
	in := kv.intents[key]
	delete(kv.intents, key)
	kv.mu.Unlock()
	in.mu.Unlock()
}

// Get blocks while another transaction's intent sits on key.
func (kv *kvStore) Get(key string) ID {
	kv.mu.Lock()
	in := kv.intents[key]
	kv.mu.Unlock()
	if in != nil {
		in.mu.Lock()
		in.mu.Unlock()
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	return kv.data[key]
}

// ---- pkg/sql/database.go ----

type databaseCache struct {
	// databases is really a map of string -> ID
	databases sync.Map
	// systemConfig holds a copy of the namespace entries gossiped with the
	// latest system config.
	systemConfig map[string]ID
}

func (dc *databaseCache) getCachedDatabaseID(name string) ID {
	if id, ok := dc.databases.Load(name); ok {
		return id.(ID)
	}
	return dc.systemConfig[name]
}

// getDatabaseID resolves a database name, going to the store on a cache miss.
func (dc *databaseCache) getDatabaseID(kv *kvStore, name string) ID {
	dbID := dc.getCachedDatabaseID(name)
	if dbID == 0 {
		dbID = kv.Get("/namespace/0/" + name)
	}
	dc.databases.Store(name, dbID)
	return dbID
}

type databaseCacheHolder struct {
	mu struct {
		sync.Mutex
		c  *databaseCache
		cv *sync.Cond
	}
}

func newDatabaseCacheHolder(c *databaseCache) *databaseCacheHolder {
	dc := &databaseCacheHolder{}
	dc.mu.c = c
	dc.mu.cv = sync.NewCond(&dc.mu.Mutex)
	return dc
}

func (dc *databaseCacheHolder) getDatabaseCache() *databaseCache {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	return dc.mu.c
}

// waitForCacheState implements the dbCacheSubscriber interface.
func (dc *databaseCacheHolder) waitForCacheState(cond func(*databaseCache) bool) {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	for done := cond(dc.mu.c); !done; done = cond(dc.mu.c) {
		dc.mu.cv.Wait()
	}
}

// updateSystemConfig is called on every gossiped system config.
func (dc *databaseCacheHolder) updateSystemConfig(cfg map[string]ID) {
	dc.mu.Lock()
	dc.mu.c = &databaseCache{systemConfig: cfg}
	dc.mu.cv.Broadcast()
	dc.mu.Unlock()
}

// ---- pkg/sql/table.go ----

type uncommittedDatabase struct {
	name    string
	id      ID
	dropped bool
}

type TableCollection struct {
	kv                   *kvStore
	dbCacheSubscriber    *databaseCacheHolder
	uncommittedDatabases []uncommittedDatabase
}

func (tc *TableCollection) waitForCacheToDropDatabases() {
	for _, uc := range tc.uncommittedDatabases {
		if !uc.dropped {
			continue
		}
		// Wait until the database cache has been updated to properly
		// reflect a dropped database, so that future commands on the
		// same gateway node observe the dropped database.
		tc.dbCacheSubscriber.waitForCacheState(
			func(dc *databaseCache) bool {
				// Resolve the database name from the database cache only;
				// never go to the store while holding the cache lock.
				dbID := dc.getCachedDatabaseID(uc.name)
				return dbID == 0 || dbID != uc.id
			},
		)
	}
}

func main() {
	kv := &kvStore{data: map[string]ID{}, intents: map[string]*intent{}}
	holder := newDatabaseCacheHolder(&databaseCache{systemConfig: map[string]ID{"defaultdb": 50}})

	var wg sync.WaitGroup
	wg.Add(2)

	// Session 2: CREATE DATABASE shop (the name of a database being dropped).
	go func() {
		defer wg.Done()
		kv.putIntent("txn-create", "/namespace/0/shop", 60)
		// ... the rest of the CREATE runs in the same transaction.
		time.Sleep(50 * time.Millisecond)
		// Resolving another name in the same statement goes through the cache.
		_ = holder.getDatabaseCache().getCachedDatabaseID("defaultdb")
		kv.resolveIntent("/namespace/0/shop") // commit
	}()

	// Session 1: DROP DATABASE shop has committed; wait for the cache.
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		tc := &TableCollection{kv: kv, dbCacheSubscriber: holder,
			uncommittedDatabases: []uncommittedDatabase{{name: "shop", id: 55, dropped: true}}}
		tc.waitForCacheToDropDatabases()
	}()

	wg.Wait()
	fmt.Println("DROP and CREATE both finished")
}
