// Modeled on etcd's lessor, with per-lease locks split into two keyed
// containers, leaseLocks (renew/revoke) and ckptLocks (checkpointing); one
// accessor, lockFor(kind, id), returns a lock from either container by kind.
//
// CORRECT: the global order is leaseLocks[*] -> le.mu -> ckptLocks[*].
// Renew/Revoke: lease lock -> le.mu (Revoke: -> ckpt lock too); Checkpoint:
// le.mu -> ckpt locks only.
// le.mu is never held while a lease lock is requested, nor a ckpt lock while
// le.mu is requested; the containers' mutexes are distinct. No cycle.
package main

import (
	"fmt"
	"sync"
)

type keyedLocks struct {
	mu    sync.Mutex
	locks map[int64]*sync.Mutex
}

func (k *keyedLocks) get(id int64) *sync.Mutex {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.locks == nil {
		k.locks = make(map[int64]*sync.Mutex)
	}
	m, ok := k.locks[id]
	if !ok {
		m = new(sync.Mutex)
		k.locks[id] = m
	}
	return m
}

type lockKind int

const kindLease, kindCheckpoint lockKind = 0, 1

type lease struct {
	ttl  int64 // guarded by lessor.mu
	ckpt int64 // guarded by the lease's ckpt lock
}

type lessor struct {
	mu         sync.Mutex
	leases     map[int64]*lease
	leaseLocks keyedLocks
	ckptLocks  keyedLocks
}

func (le *lessor) lockFor(kind lockKind, id int64) *sync.Mutex {
	if kind == kindLease {
		return le.leaseLocks.get(id)
	}
	return le.ckptLocks.get(id)
}

func (le *lessor) Renew(id int64) {
	lk := le.lockFor(kindLease, id)
	lk.Lock()
	defer lk.Unlock()
	le.mu.Lock()
	if l := le.leases[id]; l != nil {
		l.ttl += 10
	}
	le.mu.Unlock()
}

func (le *lessor) Revoke(id int64) {
	lk := le.lockFor(kindLease, id)
	lk.Lock()
	defer lk.Unlock()
	le.mu.Lock()
	defer le.mu.Unlock()
	if l := le.leases[id]; l != nil {
		ck := le.lockFor(kindCheckpoint, id)
		ck.Lock()
		l.ckpt = 0
		ck.Unlock()
		delete(le.leases, id)
	}
}

func (le *lessor) Checkpoint() {
	le.mu.Lock()
	defer le.mu.Unlock()
	for id, l := range le.leases {
		ck := le.lockFor(kindCheckpoint, id)
		ck.Lock()
		l.ckpt = l.ttl
		ck.Unlock()
	}
}

func main() {
	le := &lessor{leases: map[int64]*lease{}}
	for i := int64(0); i < 5; i++ {
		le.leases[i] = &lease{ttl: 30}
	}
	var wg sync.WaitGroup
	for i := range int64(5) {
		wg.Add(3)
		go func() { defer wg.Done(); le.Renew(i) }()
		go func() { defer wg.Done(); le.Checkpoint() }()
		go func() { defer wg.Done(); le.Revoke(i) }()
	}
	wg.Wait()
	fmt.Println(len(le.leases))
}
