// Project: ethereum/go-ethereum (core/tx_pool.go + event.Feed) -- FIXED twin.
// promoteExecutables now only returns the promoted transactions; AddRemotes
// releases pool.mu before publishing NewTxsEvent on the feed, so a subscriber
// calling back into pool.Pending() can always make progress.
package main

import (
	"context"
	"sync"
	"time"

	"example.com/recall/geth_txpool_fixed/event"
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
	pool.queue = append(pool.queue, txs...)
	promoted := pool.promoteExecutables()
	pool.mu.Unlock()

	if len(promoted) > 0 {
		pool.txFeed.Send(NewTxsEvent{Txs: promoted})
	}
}

// promoteExecutables must be called with pool.mu held.
func (pool *TxPool) promoteExecutables() []*Transaction {
	promoted := pool.queue
	pool.pending = append(pool.pending, promoted...)
	pool.queue = nil
	return promoted
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
