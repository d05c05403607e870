// Project: github.com/algorand/go-algorand
// Bug: Ledger.AddBlock notified its BlockListeners (the TransactionPool) synchronously
// while still holding trackerMu; TransactionPool.Remember holds pool.mu and reads the
// ledger (trackerMu.RLock) to check the group, so block commit and tx ingestion
// deadlock (AB-BA through the BlockListener interface).
// Fix: the ledger's blockNotifier queues new blocks and a worker goroutine calls
// OnNewBlock after trackerMu has been released.

package b20algotxpool_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

type Round uint64

type Txid string

type Block struct {
	Round   Round
	Payset  []Txid
	FeeSink string
}

type StateDelta struct{ Txids map[Txid]Round }

// BlockListener represents an object that needs to get notified on new blocks.
type BlockListener interface {
	OnNewBlock(block Block, delta StateDelta)
}

type blockDB interface {
	put(blk Block) error
}

type blockDeltaPair struct {
	block Block
	delta StateDelta
}

type blockNotifier struct {
	mu            sync.Mutex
	cond          *sync.Cond
	listeners     []BlockListener
	pendingBlocks []blockDeltaPair
	running       bool
	closing       sync.WaitGroup
}

func (bn *blockNotifier) worker() {
	defer bn.closing.Done()
	bn.mu.Lock()
	for {
		for bn.running && len(bn.pendingBlocks) == 0 {
			bn.cond.Wait()
		}
		if !bn.running {
			bn.mu.Unlock()
			return
		}
		blocks := bn.pendingBlocks
		listeners := bn.listeners
		bn.pendingBlocks = nil
		bn.mu.Unlock()
		for _, blk := range blocks {
			for _, l := range listeners {
				l.OnNewBlock(blk.block, blk.delta)
			}
		}
		bn.mu.Lock()
	}
}

func (bn *blockNotifier) start() {
	bn.cond = sync.NewCond(&bn.mu)
	bn.running = true
	bn.closing.Add(1)
	go bn.worker()
}

func (bn *blockNotifier) register(listeners []BlockListener) {
	bn.mu.Lock()
	defer bn.mu.Unlock()
	bn.listeners = append(bn.listeners, listeners...)
}

func (bn *blockNotifier) newBlock(blk Block, delta StateDelta) {
	bn.mu.Lock()
	defer bn.mu.Unlock()
	bn.pendingBlocks = append(bn.pendingBlocks, blockDeltaPair{blk, delta})
	bn.cond.Broadcast()
}

func (bn *blockNotifier) close() {
	bn.mu.Lock()
	if bn.running {
		bn.running = false
		bn.cond.Broadcast()
	}
	bn.mu.Unlock()
	bn.closing.Wait()
}

type Ledger struct {
	trackerMu sync.RWMutex
	blockDBs  blockDB
	latest    Round
	txTail    map[Txid]Round
	notifier  blockNotifier
	genesisID string
}

func OpenLedger(db blockDB) *Ledger {
	l := &Ledger{blockDBs: db, txTail: make(map[Txid]Round), genesisID: "testnet-v1.0"}
	l.notifier.start()
	return l

}

func (l *Ledger) Close() {
	l.notifier.close()
}

func (l *Ledger) RegisterBlockListeners(listeners []BlockListener) {
	l.notifier.register(listeners)
}

// AddBlock adds a certified block to the ledger.
func (l *Ledger) AddBlock(blk Block) error {
	l.trackerMu.Lock()
	defer l.trackerMu.Unlock()
	if blk.Round != l.latest+1 {
		return errors.New("ledger: out of order block")
	}
	if err := l.blockDBs.put(blk); err != nil {
		return err
	}
	delta := StateDelta{Txids: make(map[Txid]Round)}
	for _, id := range blk.Payset {
		l.txTail[id] = blk.Round
		delta.Txids[id] = blk.Round
	}
	l.latest = blk.Round
	l.notifier.newBlock(blk, delta)
	return nil
}

// CheckDup reports whether txid was already committed.
func (l *Ledger) CheckDup(id Txid) bool {
	l.trackerMu.RLock()
	defer l.trackerMu.RUnlock()
	_, dup := l.txTail[id]
	return dup
}

type TransactionPool struct {
	mu                    sync.Mutex
	ledger                *Ledger
	pendingTxGroups       [][]Txid
	pendingTxids          map[Txid]bool
	numPendingWholeBlocks int
	expiredTxCount        map[Round]int
}

func MakeTransactionPool(l *Ledger) *TransactionPool {
	return &TransactionPool{ledger: l, pendingTxids: make(map[Txid]bool), expiredTxCount: make(map[Round]int)}
}

// Remember stores the provided transaction group after checking it against the ledger.
func (pool *TransactionPool) Remember(txgroup []Txid) error {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	for _, id := range txgroup {
		if pool.pendingTxids[id] || pool.ledger.CheckDup(id) {
			return errors.New("transaction already in ledger")
		}
	}
	pool.pendingTxGroups = append(pool.pendingTxGroups, txgroup)
	for _, id := range txgroup {
		pool.pendingTxids[id] = true
	}
	return nil
}

// OnNewBlock excises transactions from the pool that are included in the block.
func (pool *TransactionPool) OnNewBlock(block Block, delta StateDelta) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	kept := pool.pendingTxGroups[:0]
	for _, g := range pool.pendingTxGroups {
		if _, in := delta.Txids[g[0]]; !in {
			kept = append(kept, g)
		}
	}
	pool.pendingTxGroups = kept
	for id := range delta.Txids {
		delete(pool.pendingTxids, id)
	}
}

type slowBlockDB struct{ writing, release chan struct{} }

func (db *slowBlockDB) put(Block) error {
	close(db.writing)
	<-db.release
	return nil
}

func TestAddBlockVersusRemember(t *testing.T) {
	db := &slowBlockDB{writing: make(chan struct{}), release: make(chan struct{})}
	l := OpenLedger(db)
	pool := MakeTransactionPool(l)
	l.RegisterBlockListeners([]BlockListener{pool})
	defer l.Close()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // agreement service commits round 1
		defer wg.Done()
		_ = l.AddBlock(Block{Round: 1, Payset: []Txid{"A"}})
	}()
	<-db.writing // AddBlock holds trackerMu
	go func() {  // tx handler receives a new group
		defer wg.Done()
		_ = pool.Remember([]Txid{"B"})
	}()
	time.Sleep(100 * time.Millisecond) // Remember holds pool.mu, waits in CheckDup
	close(db.release)
	wg.Wait()
}
