// Project: pingcap/tidb — session/tidb.go (domainMap), domain/domain.go
// Issue: pingcap/tidb#40408 "Dead lock when domain Init failed."; fix PR
// pingcap/tidb#40409 ("session: fix deadlock when init domain failed").
//
// domainMap.Get holds dm.mu for the whole creation of a new Domain. The
// Domain is built with an onClose callback (func() { dm.Delete(store) }) so
// that closing a domain removes it from the map. When d.Init fails inside
// the RunWithRetry loop, Get cleans up with d.Close(), and Domain.Close runs
// do.onClose() -> domainMap.Delete -> dm.mu.Lock(), re-acquiring the
// non-reentrant mutex Get already holds. Bootstrap hangs forever at
// dm.mu.Lock() in Delete (line 104).
package main

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

type Storage interface{ UUID() string }

type mockStore struct{ uuid string }

func (s *mockStore) UUID() string { return s.uuid }

// Domain represents a storage space.
type Domain struct {
	store   Storage
	onClose func()
	closed  bool
}

func NewDomain(store Storage, ddlLease time.Duration, onClose func()) *Domain {
	return &Domain{store: store, onClose: onClose}
}

var errPDUnavailable = errors.New("[pd] failed to get cluster id")

// Init initializes a domain (DDL owner manager, info syncer, schema reload).
func (do *Domain) Init(ddlLease time.Duration) error {
	return errPDUnavailable
}

// Close closes the Domain and release its resource.
func (do *Domain) Close() {
	if do == nil || do.closed {
		return
	}
	do.closed = true
	// ... stop ddl, info syncer, sysSessionPool ...
	if do.onClose != nil {
		do.onClose()
	}
}

// RunWithRetry runs f up to retryCnt times while it asks to be retried.
func RunWithRetry(retryCnt int, backoff time.Duration, f func() (bool, error)) (err error) {
	for i := 1; i <= retryCnt; i++ {
		var retryAble bool
		retryAble, err = f()
		if err == nil || !retryAble {
			return err
		}
		time.Sleep(backoff)
	}
	return err
}

type domainMap struct {
	mu      sync.Mutex
	domains map[string]*Domain
}

func (dm *domainMap) Get(store Storage) (d *Domain, err error) {
	dm.mu.Lock()
	defer dm.mu.Unlock()

	key := store.UUID()
	d = dm.domains[key]
	if d != nil {
		return
	}
	ddlLease := 45 * time.Second
	err = RunWithRetry(3, time.Millisecond, func() (retry bool, err1 error) {
		onClose := func() { dm.Delete(store) }
		d = NewDomain(store, ddlLease, onClose)
		err1 = d.Init(ddlLease)
		if err1 != nil {
			// If we don't clean it, there are some dirty data when retrying the function of Init.
			d.Close()
			fmt.Println("[ddl] init domain failed:", err1)
		}
		return true, err1
	})
	if err != nil {
		return nil, err
	}
	dm.domains[key] = d
	return
}

func (dm *domainMap) Delete(store Storage) {
	dm.mu.Lock() // deadlock: Get already holds dm.mu
	delete(dm.domains, store.UUID())
	dm.mu.Unlock()
}

var domap = &domainMap{domains: map[string]*Domain{}}

// BootstrapSession runs the first time when the TiDB server start.
func BootstrapSession(store Storage) (*Domain, error) {
	return domap.Get(store)
}

func main() {
	_, err := BootstrapSession(&mockStore{uuid: "tikv-7188e3c5"})
	fmt.Println("bootstrap finished:", err)
}
