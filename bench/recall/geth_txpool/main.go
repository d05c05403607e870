// Project: ethereum/go-ethereum (core/tx_pool.go + event.Feed), as remembered.
// Bug: promoteExecutables ran with pool.mu held (AddRemotes -> addTxs) and
// published NewTxsEvent synchronously on txFeed. Feed.Send blocks until every
// subscriber has received. The miner worker, on receiving the event, calls
// pool.Pending(), which needs pool.mu. With a second AddRemotes in flight the
// pool waits on the worker's channel while the worker waits on pool.mu.
// Fix (in geth): events are collected and sent after the lock is released.
package main

import (
	"context"
	"sync"
	"time"

	"example.com/recall/geth_txpool/event"
)

type Transaction struct{ Nonce uint64 }

type NewTxsEvent struct{ Txs []*Transaction }

type TxPool struct {
	mu      sync.RWMutex
	pending []*Transaction
	queue   []*Transaction
	txFeed  event.Feed[NewTxsEvent]
}

func (pool *TxPool) AddRemotes(txs []*Transaction) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	pool.queue = append(pool.queue, txs...)
	pool.promoteExecutables()
}

func (pool *TxPool) promoteExecutables() {
	promoted := pool.queue
	pool.pending = append(pool.pending, promoted...)
	pool.queue = nil
	if len(promoted) > 0 {
		pool.txFeed.Send(NewTxsEvent{Txs: promoted})
	}
}

func (pool *TxPool) Pending() []*Transaction {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return append([]*Transaction(nil), pool.pending...)
}

type worker struct {
	pool *TxPool
	txCh chan NewTxsEvent
}

func newWorker(ctx context.Context, pool *TxPool) *worker {
	w := &worker{pool: pool, txCh: make(chan NewTxsEvent)}
	pool.txFeed.Subscribe(w.txCh)
	go w.mainLoop(ctx)
	return w
}

func (w *worker) mainLoop(ctx context.Context) {
	for {
		select {
		case <-w.txCh:
			_ = w.pool.Pending() // rebuild the pending block
		case <-ctx.Done():
			return
		}
	}
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := &TxPool{}
	newWorker(ctx, pool)
	for i := 0; i < 2; i++ {
		go func(n uint64) {
			for {
				pool.AddRemotes([]*Transaction{{Nonce: n}})
			}
		}(uint64(i))
	}
	time.Sleep(time.Second)
}
