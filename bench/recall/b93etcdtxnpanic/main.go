// Project: etcd-io/etcd (server/etcdserver/txn/txn.go Txn/txn, server/storage/mvcc/kvstore_txn.go store.Write and storeTxnWrite.End, server/storage/backend/batch_tx.go and backend.go run loop), v3.6/main, June 2026 (issue #21939, fix proposed in PR #21964; approximate).
// Bug: Txn opens the write transaction with kv.Write, which read-locks store.mu and locks the backend batchTx, and releases both only by calling txnWrite.End() after txn returns; when a write operation fails inside txn the code calls lg.Panic, so a caller that recovers the panic (the TestWriteTxnPanicWithoutApply test, or an embedder that recovers apply panics) is left with batchTx locked by nobody, and the backend commit loop (safePending) and the next ForceCommit block on it forever. The proposed fix registers defer txnWrite.End() right after kv.Write so the locks are released during panic unwinding.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

type logger struct{}

func (logger) Panic(msg string, err error) { panic(fmt.Sprintf("%s: %v", msg, err)) }

// batchTx is the backend's shared write transaction.
type batchTx struct {
	sync.Mutex
	backend *backend
	pending int
}

func (t *batchTx) LockInsideApply() { t.Lock() }

func (t *batchTx) UnsafePut(bucket, key, value string) { t.pending++ }

func (t *batchTx) safePending() int {
	t.Mutex.Lock()
	defer t.Mutex.Unlock()
	return t.pending
}

func (t *batchTx) commit(stop bool) { t.pending = 0 }

func (t *batchTx) Commit() {
	t.Lock()
	t.commit(false)
	t.Unlock()
}

func (t *batchTx) CommitAndStop() {
	t.Lock()
	t.commit(true)
	t.Unlock()
}

type backend struct {
	batchInterval time.Duration
	batchTx       *batchTx
	stopc, donec  chan struct{}
}

func newBackend() *backend {
	b := &backend{batchInterval: 10 * time.Millisecond, stopc: make(chan struct{}), donec: make(chan struct{})}
	b.batchTx = &batchTx{backend: b}
	go b.run()
	return b
}

func (b *backend) BatchTx() *batchTx { return b.batchTx }
func (b *backend) ForceCommit()      { b.batchTx.Commit() }
func (b *backend) Close()            { close(b.stopc); <-b.donec }

func (b *backend) run() {
	defer close(b.donec)
	t := time.NewTimer(b.batchInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-b.stopc:
			b.batchTx.CommitAndStop()
			return
		}
		if b.batchTx.safePending() != 0 {
			b.batchTx.Commit()
		}
		t.Reset(b.batchInterval)
	}
}

// store is mvcc's KV.
type store struct {
	mu         sync.RWMutex // guards the whole txn lifetime against Restore/Commit
	b          *backend
	revMu      sync.RWMutex
	currentRev int64
}

type storeTxnWrite struct {
	s       *store
	tx      *batchTx
	changes int
}

func (s *store) Write() *storeTxnWrite {
	s.mu.RLock()
	tx := s.b.BatchTx()
	tx.LockInsideApply()
	return &storeTxnWrite{s: s, tx: tx}
}

func (tw *storeTxnWrite) Put(ctx context.Context, key, value string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tw.tx.UnsafePut("key", key, value)
	tw.changes++
	return nil
}

func (tw *storeTxnWrite) End() {
	if tw.changes != 0 {
		tw.s.revMu.Lock()
		tw.s.currentRev++
	}
	tw.tx.Unlock()
	if tw.changes != 0 {
		tw.s.revMu.Unlock()
	}
	tw.s.mu.RUnlock()
}

type TxnRequest struct{ Puts map[string]string }

func txn(ctx context.Context, lg logger, txnWrite *storeTxnWrite, rt *TxnRequest, isWrite bool) error {
	for k, v := range rt.Puts {
		if err := txnWrite.Put(ctx, k, v); err != nil {
			if isWrite {
				// CAUTION: a failed write must crash the server instead of ending the txn.
				lg.Panic("unexpected error during txn with writes", err)
			}
			return err
		}
	}
	return nil
}

func Txn(ctx context.Context, lg logger, rt *TxnRequest, kv *store) error {
	txnWrite := kv.Write()
	err := txn(ctx, lg, txnWrite, rt, true)
	txnWrite.End()
	return err
}

func main() {
	be := newBackend()
	kv := &store{b: be}

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the request context is already gone when the txn is applied
	func() {
		defer func() {
			if r := recover(); r != nil {
				fmt.Println("recovered:", r)
			}
		}()
		_ = Txn(ctx, logger{}, &TxnRequest{Puts: map[string]string{"foo": "bar"}}, kv)
	}()

	time.Sleep(30 * time.Millisecond) // the backend commit loop ticks
	be.ForceCommit()
	be.Close()
	fmt.Println("backend closed:", errors.Is(ctx.Err(), context.Canceled))
}
