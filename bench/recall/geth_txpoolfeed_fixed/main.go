// Project: Go-ethereum (core/tx_pool.go) -- FIXED TWIN.
// Change: promoteExecutables sends the NewTxsEvent from a new goroutine
//
//	(go pool.txFeed.Send(...)) instead of blocking under pool.mu.
package main

import (
	"fmt"
	"sync"
	"time"
)

type Address [20]byte
type Transaction struct {
	From  Address
	Nonce uint64
}
type NewTxsEvent struct{ Txs []*Transaction }

// Feed is a minimal event.Feed: Send delivers to all subscribers synchronously.
type Feed struct {
	mu   sync.Mutex
	subs []chan<- NewTxsEvent
}

func (f *Feed) Subscribe(ch chan<- NewTxsEvent) {
	f.mu.Lock()
	f.subs = append(f.subs, ch)
	f.mu.Unlock()
}

func (f *Feed) Send(ev NewTxsEvent) (nsent int) {
	f.mu.Lock()
	subs := append([]chan<- NewTxsEvent(nil), f.subs...)
	f.mu.Unlock()
	for _, ch := range subs {
		ch <- ev
		nsent++
	}
	return nsent
}

type TxPool struct {
	mu      sync.RWMutex
	queue   map[Address][]*Transaction
	pending map[Address][]*Transaction
	txFeed  Feed
}

func NewTxPool() *TxPool {
	return &TxPool{queue: map[Address][]*Transaction{}, pending: map[Address][]*Transaction{}}
}

func (pool *TxPool) SubscribeNewTxsEvent(ch chan<- NewTxsEvent) { pool.txFeed.Subscribe(ch) }

// AddRemotes enqueues a batch of transactions from the p2p layer.
func (pool *TxPool) AddRemotes(txs []*Transaction) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	dirty := map[Address]struct{}{}
	for _, tx := range txs {
		pool.queue[tx.From] = append(pool.queue[tx.From], tx)
		dirty[tx.From] = struct{}{}
	}
	pool.promoteExecutables(dirty)
}

// promoteExecutables moves executable queued txs to pending. Requires pool.mu.
func (pool *TxPool) promoteExecutables(accounts map[Address]struct{}) {
	var promoted []*Transaction
	for addr := range accounts {
		promoted = append(promoted, pool.queue[addr]...)
		pool.pending[addr] = append(pool.pending[addr], pool.queue[addr]...)
		delete(pool.queue, addr)
	}
	// Notify subsystem for new promoted transactions.
	if len(promoted) > 0 {
		go pool.txFeed.Send(NewTxsEvent{promoted})
	}
}

// Pending retrieves all currently processable transactions.
func (pool *TxPool) Pending() map[Address][]*Transaction {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	out := make(map[Address][]*Transaction, len(pool.pending))
	for a, txs := range pool.pending {
		out[a] = append([]*Transaction(nil), txs...)
	}
	return out
}

type worker struct {
	pool  *TxPool
	txsCh chan NewTxsEvent
}

func (w *worker) mainLoop(n int) {
	for i := 0; i < n; i++ {
		ev := <-w.txsCh
		time.Sleep(time.Millisecond) // commitNewWork: prepare header
		pending := w.pool.Pending()
		fmt.Printf("worker: event with %d txs, %d accounts pending\n", len(ev.Txs), len(pending))
	}
}

func main() {
	pool := NewTxPool()
	w := &worker{pool: pool, txsCh: make(chan NewTxsEvent)}
	pool.SubscribeNewTxsEvent(w.txsCh)
	go w.mainLoop(1 << 30)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // eth protocol handler importing txs from peers
		defer wg.Done()
		for i := 0; i < 5; i++ {
			pool.AddRemotes([]*Transaction{{From: Address{byte(i)}, Nonce: 0}})
		}
	}()
	wg.Wait()
	time.Sleep(20 * time.Millisecond)
	fmt.Println("imported all transactions")
}
