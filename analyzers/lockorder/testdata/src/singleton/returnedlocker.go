package main

import "sync"

// A Locker interface a package function returns, when every return is
// one type that embeds its mutex, is that mutex: etcd's lessor locks the
// backend's batch transaction through the BatchTx interface BatchTx()
// returns, then force-commits, and the commit locks it again.

type BatchTx interface {
	Lock()
	Unlock()
	Put(k string)
}

type batchTx struct {
	sync.Mutex
	pending int
}

func (t *batchTx) Put(k string) { t.pending++ }

func (t *batchTx) Commit() {
	t.Lock()
	defer t.Unlock()
	t.pending = 0
}

type Backend interface {
	BatchTx() BatchTx
	ForceCommit()
}

type backend struct{ tx *batchTx }

func (b *backend) BatchTx() BatchTx { return b.tx }
func (b *backend) ForceCommit()     { b.tx.Commit() }

type lessor struct{ b Backend }

func (le *lessor) recover() {
	tx := le.b.BatchTx()
	tx.Lock()
	defer tx.Unlock()
	tx.Put("lease")
	le.b.ForceCommit() // want `batchTx.Mutex locked again by backend.ForceCommit -> batchTx.Commit \(at returnedlocker.go:\d+\), the same lock: the program makes one batchTx .*\[double-lock\]`
}

// The fix commits after the transaction is let go. Silent.
func (le *lessor) recoverFixed() {
	tx := le.b.BatchTx()
	tx.Lock()
	tx.Put("lease")
	tx.Unlock()
	le.b.ForceCommit()
}

func runLessor() {
	le := &lessor{b: &backend{tx: &batchTx{}}}
	le.recover()
	le.recoverFixed()
}
