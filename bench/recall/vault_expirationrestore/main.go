// Project: HashiCorp Vault (vault/expiration.go, sdk/helper/locksutil/locks.go)
// Bug: A restore worker runs processRestore(B): it takes B's entry in the restoreLocks lock map and, while
//      loading the lease, calls updatePending, which takes m.pendingLock. A failing revocation job runs
//      revocationJob.OnFailure(A): it holds m.pendingLock and calls m.loadEntry(A), which in restore mode
//      takes A's restoreLocks entry. A and B hash to the same LockEntry, so the two goroutines wait AB-BA.
// Upstream fix: hashicorp/vault#22374 makes OnFailure release pendingLock before loading the lease entry.

package main

import (
	"crypto/md5"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

const maxRevokeAttempts = 6

type LockEntry struct{ sync.RWMutex }

func CreateLocks() (locks []*LockEntry) {
	for range 256 {
		locks = append(locks, new(LockEntry))
	}
	return locks
}

func LockForKey(locks []*LockEntry, key string) *LockEntry {
	return locks[md5.Sum([]byte(key))[0]]
}

type (
	leaseEntry  struct{ LeaseID string }
	pendingInfo struct{ revokesAttempted uint8 }
)

type ExpirationManager struct {
	pendingLock   sync.Mutex
	pending       map[string]pendingInfo
	irrevocable   map[string]string
	restoreMode   atomic.Bool
	restoreLocks  []*LockEntry
	restoreLoaded sync.Map
}

func (m *ExpirationManager) lockLease(leaseID string)   { LockForKey(m.restoreLocks, leaseID).Lock() } // DEADLOCK HERE
func (m *ExpirationManager) unlockLease(leaseID string) { LockForKey(m.restoreLocks, leaseID).Unlock() }

func (m *ExpirationManager) updatePending(le *leaseEntry) {
	m.pendingLock.Lock()
	defer m.pendingLock.Unlock()
	m.pending[le.LeaseID] = pendingInfo{}
}

func (m *ExpirationManager) loadEntryInternal(leaseID string, restoreMode, checkRestored bool) *leaseEntry {
	time.Sleep(10 * time.Millisecond) // m.idView(ns).Get(ctx, leaseID) from storage
	le := &leaseEntry{LeaseID: leaseID}
	if restoreMode {
		if _, ok := m.restoreLoaded.Load(leaseID); ok && checkRestored {
			return le
		}
		m.restoreLoaded.Store(leaseID, struct{}{})
		m.updatePending(le)
	}
	return le
}

func (m *ExpirationManager) loadEntry(leaseID string) *leaseEntry {
	restoreMode := m.restoreMode.Load()
	if restoreMode {
		m.lockLease(leaseID)
		defer m.unlockLease(leaseID)
	}
	return m.loadEntryInternal(leaseID, restoreMode, true)
}

func (m *ExpirationManager) processRestore(leaseID string) {
	m.lockLease(leaseID)
	defer m.unlockLease(leaseID)
	m.loadEntryInternal(leaseID, true, false)
}

type revocationJob struct {
	leaseID string
	m       *ExpirationManager
}

func (r *revocationJob) OnFailure(err error) {
	r.m.pendingLock.Lock()
	defer r.m.pendingLock.Unlock()
	pending := r.m.pending[r.leaseID]
	if pending.revokesAttempted++; pending.revokesAttempted >= maxRevokeAttempts {
		le := r.m.loadEntry(r.leaseID)
		delete(r.m.pending, le.LeaseID)
		r.m.irrevocable[le.LeaseID] = err.Error()
		return
	}
	r.m.pending[r.leaseID] = pending
}

func main() {
	m := &ExpirationManager{pending: map[string]pendingInfo{}, irrevocable: map[string]string{}, restoreLocks: CreateLocks()}
	m.restoreMode.Store(true)
	leaseA := "database/creds/readonly/a1"
	m.restoreLoaded.Store(leaseA, struct{}{})
	m.pending[leaseA] = pendingInfo{revokesAttempted: maxRevokeAttempts - 1}
	leaseB := ""
	for i := 0; leaseB == "" || LockForKey(m.restoreLocks, leaseB) != LockForKey(m.restoreLocks, leaseA); i++ {
		leaseB = fmt.Sprintf("aws/creds/deploy/%d", i)
	}
	job, errRevoke := &revocationJob{leaseID: leaseA, m: m}, fmt.Errorf("revocation backend unreachable")
	var wg sync.WaitGroup
	wg.Go(func() { m.processRestore(leaseB) })
	time.Sleep(3 * time.Millisecond)
	wg.Go(func() { job.OnFailure(errRevoke) })
	wg.Wait()
	fmt.Println("restored", leaseB, "- irrevocable:", m.irrevocable)
}
