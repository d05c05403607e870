// FIXED twin (PR #6949: es.es.Add(err)).
// Project: thanos-io/thanos (pkg/errutil/multierror.go, pkg/receive/multitsdb.go)
// Issue: thanos-io/thanos PR #6949 "errutil: fix deadlock" (Dec 2023): "Fix
// deadlock in the Add() function - it accidentally was calling itself
// recursively ... This deadlock can manifest in Receive - million+ leaking
// goroutines, all stuck on the MultiTSDB lock."
//
// SyncMultiError.Add locks es.mtx and then calls es.Add(err) - itself - instead
// of es.es.Add(err) on the wrapped MultiError. The recursive call blocks on the
// sync.Mutex it already holds (line 57, reached a second time from line 60).
// In Receive, MultiTSDB.Prune read-locks t.mtx and waits (wg.Wait, line 151)
// for one goroutine per tenant; a tenant whose pruning fails reports the error
// through merr.Add and never returns, so Prune never releases t.mtx and every
// writer (and, behind it, every reader) of the MultiTSDB lock piles up.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- pkg/errutil ----

// The MultiError type implements the error interface, and contains the
// Errors used to construct it.
type MultiError []error

// Add adds the error to the error list if it is not nil.
func (es *MultiError) Add(err error) {
	if err == nil {
		return
	}
	*es = append(*es, err)
}

// Err returns the error list as an error or nil if it is empty.
func (es MultiError) Err() error {
	if len(es) == 0 {
		return nil
	}
	return errors.Join(es...)
}

// SyncMultiError is a thread-safe implementation of MultiError.
type SyncMultiError struct {
	mtx sync.Mutex
	es  MultiError
}

// Add adds the error to the error list if it is not nil.
func (es *SyncMultiError) Add(err error) {
	if err == nil {
		return
	}
	es.mtx.Lock()
	defer es.mtx.Unlock()

	es.es.Add(err)
}

// Err returns the error list as an error or nil if it is empty.
func (es *SyncMultiError) Err() error {
	es.mtx.Lock()
	defer es.mtx.Unlock()

	return es.es.Err()
}

// ---- pkg/receive ----

// fakeTSDB stands in for *tsdb.DB.
type fakeTSDB struct {
	maxTime    int64
	compactErr error
}

func (db *fakeTSDB) HeadMaxTime() int64 { return db.maxTime }
func (db *fakeTSDB) CompactHead() error { return db.compactErr }

type ReadyStorage struct {
	mtx sync.RWMutex
	a   *fakeTSDB
}

func (s *ReadyStorage) get() *fakeTSDB {
	s.mtx.RLock()
	defer s.mtx.RUnlock()
	return s.a
}

type tenant struct {
	readyS *ReadyStorage
}

func (t *tenant) readyStorage() *ReadyStorage { return t.readyS }

type MultiTSDB struct {
	mtx              *sync.RWMutex
	tenants          map[string]*tenant
	maxBlockDuration int64
}

// pruneTSDB removes a TSDB if its past the retention period.
// It compacts the TSDB head, sends all remaining blocks to S3 and removes the TSDB from disk.
func (t *MultiTSDB) pruneTSDB(ctx context.Context, tenantInstance *tenant) (bool, error) {
	tenantTSDB := tenantInstance.readyStorage().get()
	if tenantTSDB == nil {
		return false, nil
	}
	sinceLastAppendMillis := time.Now().UnixMilli() - tenantTSDB.HeadMaxTime()
	compactThreshold := int64(1.5 * float64(t.maxBlockDuration))
	if sinceLastAppendMillis <= compactThreshold {
		return false, nil
	}
	if err := tenantTSDB.CompactHead(); err != nil {
		return false, err
	}
	return true, nil
}

// Prune flushes and closes the TSDB for tenants that haven't received
// any new samples for longer than the TSDB retention period.
func (t *MultiTSDB) Prune(ctx context.Context) error {
	var (
		wg   sync.WaitGroup
		merr SyncMultiError

		prunedTenants []string
		pmtx          sync.Mutex
	)

	t.mtx.RLock()
	for tenantID, tenantInstance := range t.tenants {
		wg.Add(1)
		go func(tenantID string, tenantInstance *tenant) {
			defer wg.Done()
			pruned, err := t.pruneTSDB(ctx, tenantInstance)
			if err != nil {
				merr.Add(err)
				return
			}
			if pruned {
				pmtx.Lock()
				defer pmtx.Unlock()
				prunedTenants = append(prunedTenants, tenantID)
			}
		}(tenantID, tenantInstance)
	}
	wg.Wait()
	t.mtx.RUnlock()

	t.mtx.Lock()
	defer t.mtx.Unlock()
	for _, tenantID := range prunedTenants {
		// Check that the tenant hasn't been reinitialized in-between locks.
		if t.tenants[tenantID].readyStorage().get() != nil {
			continue
		}
		delete(t.tenants, tenantID)
	}
	return merr.Err()
}

func main() {
	idle := time.Now().Add(-24 * time.Hour).UnixMilli()
	t := &MultiTSDB{
		mtx:              &sync.RWMutex{},
		maxBlockDuration: (2 * time.Hour).Milliseconds(),
		tenants: map[string]*tenant{
			"team-a": {readyS: &ReadyStorage{a: &fakeTSDB{maxTime: idle, compactErr: errors.New("compact head: no space left on device")}}},
		},
	}
	// The receiver's pruning loop.
	err := t.Prune(context.Background())
	fmt.Println("prune:", err)
}
