// Project: thanos-io/thanos (Receive component), mid-2024 main branch.
// Files/functions: pkg/receive/multitsdb.go: MultiTSDB.TSDBLocalClients,
// tenant.client, tenant.store, MultiTSDB.Prune, MultiTSDB.pruneTSDB, ReadyStorage.
// Fix: thanos-io/thanos PR #7700 "receive/multitsdb: remove double lock"
// (September 2024): "Do not double lock here as in some situations it could
// lead to a dead-lock situation. Encountered this in prod during pruning".
//
// tenant.client read-locks the tenant mutex and then calls the tenant.store
// getter, which read-locks the same mutex again. The store-API path
// (TSDBLocalClients, run for every query fan-out) therefore holds t.mtx for
// reading while it asks for it a second time. The pruning loop
// (MultiTSDB.Prune -> pruneTSDB) write-locks every tenant's mutex to keep
// the shipper from running while it compacts the head. If the pruner's Lock
// arrives between the two read locks, sync.RWMutex makes the second RLock
// wait behind the pending writer, while the writer waits for the first read
// lock to go away: the receiver hangs, and every later query and every
// later write to that tenant piles up behind it.
//
// The fix makes client read t.storeTSDB directly under the read lock it
// already holds instead of calling the locking getter.
//
// The program runs the query path and the pruner in two loops; the writer
// lands between the two read locks within a few iterations.
package main

import (
	"fmt"
	"sync"
	"time"
)

type logger interface{ Log(kv ...interface{}) error }

type nopLogger struct{}

func (nopLogger) Log(...interface{}) error { return nil }

type DB struct {
	dir     string
	headMax int64
}

func (db *DB) CompactHead() error { return nil }

type adapter struct{ db *DB }

// ReadyStorage lets the TSDB be set once it has been opened.
type ReadyStorage struct {
	mtx sync.RWMutex
	a   *adapter
}

func (s *ReadyStorage) get() *adapter {
	s.mtx.RLock()
	x := s.a
	s.mtx.RUnlock()
	return x
}

type TSDBStore struct{ db *DB }

type Shipper struct{}

func (s *Shipper) Sync() (int, error) { return 0, nil }

type localClient struct {
	store  *TSDBStore
	logger logger
}

type tenant struct {
	readyS    *ReadyStorage
	storeTSDB *TSDBStore
	ship      *Shipper

	mtx *sync.RWMutex
}

func (t *tenant) readyStorage() *ReadyStorage { return t.readyS }

func (t *tenant) store() *TSDBStore {
	t.mtx.RLock()
	defer t.mtx.RUnlock()
	return t.storeTSDB
}

func (t *tenant) client(l logger) *localClient {
	t.mtx.RLock()
	defer t.mtx.RUnlock()

	tsdbStore := t.store()
	if tsdbStore == nil {
		return nil
	}
	return &localClient{store: tsdbStore, logger: l}
}

type MultiTSDB struct {
	logger           logger
	retention        int64
	maxBlockDuration int64
	mtx              *sync.RWMutex
	tenants          map[string]*tenant
}

func (t *MultiTSDB) TSDBLocalClients() []*localClient {
	t.mtx.RLock()
	defer t.mtx.RUnlock()

	res := make([]*localClient, 0, len(t.tenants))
	for _, tenant := range t.tenants {
		if c := tenant.client(t.logger); c != nil {
			res = append(res, c)
		}
	}
	return res
}

// Prune flushes and closes the TSDB of tenants that stopped receiving samples.
func (t *MultiTSDB) Prune() error {
	var wg sync.WaitGroup
	t.mtx.RLock()
	for _, tenantInstance := range t.tenants {
		wg.Add(1)
		go func(ti *tenant) {
			defer wg.Done()
			_, _ = t.pruneTSDB(ti)
		}(tenantInstance)
	}
	wg.Wait()
	t.mtx.RUnlock()
	return nil
}

func (t *MultiTSDB) pruneTSDB(tenantInstance *tenant) (bool, error) {
	tenantTSDB := tenantInstance.readyStorage()
	if tenantTSDB.get() == nil {
		return false, nil
	}
	// Acquire a write lock and check that no writes have occurred in-between locks.
	tenantTSDB.mtx.Lock()
	defer tenantTSDB.mtx.Unlock()

	// Lock the entire tenant to make sure the shipper is not running in parallel.
	tenantInstance.mtx.Lock()
	defer tenantInstance.mtx.Unlock()

	tdb := tenantTSDB.a.db
	sinceLastAppend := time.Now().UnixMilli() - tdb.headMax
	if sinceLastAppend <= t.maxBlockDuration {
		return false, nil
	}
	if err := tdb.CompactHead(); err != nil {
		return false, err
	}
	if sinceLastAppend <= t.retention {
		return false, nil
	}
	return true, nil
}

func main() {
	db := &DB{dir: "data/tenant-a", headMax: time.Now().Add(-3 * time.Hour).UnixMilli()}
	ten := &tenant{
		readyS:    &ReadyStorage{a: &adapter{db: db}},
		storeTSDB: &TSDBStore{db: db},
		ship:      &Shipper{},
		mtx:       &sync.RWMutex{},
	}
	m := &MultiTSDB{
		logger:           nopLogger{},
		retention:        int64(24 * time.Hour / time.Millisecond),
		maxBlockDuration: int64(2 * time.Hour / time.Millisecond),
		mtx:              &sync.RWMutex{},
		tenants:          map[string]*tenant{"tenant-a": ten},
	}

	done := make(chan struct{})
	var stop sync.WaitGroup
	stop.Add(1)
	go func() { // the pruning loop of the receiver
		defer stop.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			_ = m.Prune()
		}
	}()

	n := 0
	for i := 0; i < 200000; i++ { // store API fan-out for queries
		n += len(m.TSDBLocalClients())
	}
	close(done)
	stop.Wait()
	fmt.Println("clients handed out:", n)
}
