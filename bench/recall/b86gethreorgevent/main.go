// Project: ethereum/go-ethereum (core/chain_manager.go ChainManager.InsertChain/reorg/CurrentBlock, core/tx_pool.go TxPool.eventLoop/resetState/validatePool, event/event.go TypeMux.Post), Geth 1.2 development, October 2015.
// Bug: ChainManager.reorg ran with self.mu write-locked and ended by posting
// RemovedTransactionEvent on the TypeMux, whose Post blocks until every
// subscriber has received the event. The transaction pool's eventLoop, that
// subscriber, was still revalidating after the previous ChainHeadEvent and
// reads the head through ChainManager.CurrentBlock, which needs self.mu, so the
// block importer and the pool wait on each other forever (PR #1865; the fix
// posts the event from a new goroutine "because of the transaction pool trying
// to acquire the chain manager lock").
package main

import (
	"fmt"
	"reflect"
	"sync"
	"time"
)

// TypeMuxEvent is a time-tagged notification pushed to subscribers.
type TypeMuxEvent struct {
	Time time.Time
	Data interface{}
}

// TypeMux dispatches events to registered receivers.
type TypeMux struct {
	mutex sync.RWMutex
	subm  map[reflect.Type][]*TypeMuxSubscription
}

type TypeMuxSubscription struct {
	created time.Time
	closing chan struct{}
	postMu  sync.RWMutex
	readC   <-chan *TypeMuxEvent
	postC   chan<- *TypeMuxEvent
}

func (mux *TypeMux) Subscribe(types ...interface{}) *TypeMuxSubscription {
	c := make(chan *TypeMuxEvent)
	sub := &TypeMuxSubscription{created: time.Now(), closing: make(chan struct{}), readC: c, postC: c}
	mux.mutex.Lock()
	defer mux.mutex.Unlock()
	for _, t := range types {
		rtyp := reflect.TypeOf(t)
		mux.subm[rtyp] = append(mux.subm[rtyp], sub)
	}
	return sub
}

// Post sends an event to all receivers registered for the given type.
func (mux *TypeMux) Post(ev interface{}) error {
	event := &TypeMuxEvent{Time: time.Now(), Data: ev}
	mux.mutex.RLock()
	subs := mux.subm[reflect.TypeOf(ev)]
	mux.mutex.RUnlock()
	for _, sub := range subs {
		sub.deliver(event)
	}
	return nil
}

func (s *TypeMuxSubscription) Chan() <-chan *TypeMuxEvent { return s.readC }

func (s *TypeMuxSubscription) deliver(event *TypeMuxEvent) {
	if s.created.After(event.Time) {
		return
	}
	s.postMu.RLock()
	defer s.postMu.RUnlock()
	select {
	case s.postC <- event:
	case <-s.closing:
	}
}

type Block struct {
	Number     uint64
	Hash       string
	ParentHash string
	Td         int
	Txs        []string
}

type ChainHeadEvent struct{ Block *Block }
type RemovedTransactionEvent struct{ Txs []string }

type ChainManager struct {
	eventMux     *TypeMux
	chainmu      sync.Mutex   // insertion lock
	mu           sync.RWMutex // global mutex for locking chain operations
	currentBlock *Block
	blocks       map[string]*Block
}

func (self *ChainManager) CurrentBlock() *Block {
	self.mu.RLock()
	defer self.mu.RUnlock()
	return self.currentBlock
}

// State returns a new mutable state based on the current HEAD block.
func (self *ChainManager) State() (string, error) {
	return "state@" + self.CurrentBlock().Hash, nil
}

func (self *ChainManager) InsertChain(chain []*Block) (int, error) {
	self.chainmu.Lock()
	defer self.chainmu.Unlock()
	var head *Block
	for i, block := range chain {
		self.blocks[block.Hash] = block
		cblock := self.CurrentBlock()
		if block.Td <= cblock.Td {
			continue // side chain block
		}
		if block.ParentHash != cblock.Hash {
			if err := self.reorg(cblock, block); err != nil {
				return i, err
			}
		}
		self.mu.Lock()
		self.currentBlock = block
		self.mu.Unlock()
		head = block
	}
	if head != nil {
		self.eventMux.Post(ChainHeadEvent{head})
	}
	return len(chain), nil
}

// reorg takes two blocks, an old chain and a new chain, and reconstructs the
// blocks and inserts them to be part of the new canonical chain.
func (self *ChainManager) reorg(oldBlock, newBlock *Block) error {
	self.mu.Lock()
	defer self.mu.Unlock()

	var deletedTxs []string
	added := map[string]bool{}
	for ; newBlock.Number > oldBlock.Number; newBlock = self.blocks[newBlock.ParentHash] {
		for _, tx := range newBlock.Txs {
			added[tx] = true
		}
	}
	// find the common ancestor, collecting the transactions of the old chain
	for oldBlock.Hash != newBlock.Hash {
		deletedTxs = append(deletedTxs, oldBlock.Txs...)
		for _, tx := range newBlock.Txs {
			added[tx] = true
		}
		oldBlock, newBlock = self.blocks[oldBlock.ParentHash], self.blocks[newBlock.ParentHash]
	}
	// calculate the difference between deleted and added transactions
	var diff []string
	for _, tx := range deletedTxs {
		if !added[tx] {
			diff = append(diff, tx)
		}
	}
	self.eventMux.Post(RemovedTransactionEvent{diff})
	return nil
}

type TxPool struct {
	mu           sync.RWMutex
	currentState func() (string, error)
	events       *TypeMuxSubscription
	pending      map[string]string
}

func NewTxPool(eventMux *TypeMux, currentStateFn func() (string, error)) *TxPool {
	pool := &TxPool{currentState: currentStateFn, pending: make(map[string]string)}
	pool.events = eventMux.Subscribe(ChainHeadEvent{}, RemovedTransactionEvent{})
	go pool.eventLoop()
	return pool
}

func (pool *TxPool) eventLoop() {
	for ev := range pool.events.Chan() {
		switch ev := ev.Data.(type) {
		case ChainHeadEvent:
			pool.mu.Lock()
			pool.resetState()
			pool.mu.Unlock()
		case RemovedTransactionEvent:
			pool.AddTransactions(ev.Txs)
		}
	}
}

func (pool *TxPool) resetState() {
	if _, err := pool.currentState(); err != nil {
		return
	}
	pool.validatePool()
}

// validatePool removes invalid and processed transactions from the main pool.
func (pool *TxPool) validatePool() {
	for hash := range pool.pending {
		if err := pool.validateTx(hash); err != nil {
			delete(pool.pending, hash)
		}
	}
}

func (pool *TxPool) validateTx(hash string) error {
	time.Sleep(time.Millisecond) // sender recovery (ecrecover)
	_, err := pool.currentState()
	return err
}

func (pool *TxPool) AddTransactions(txs []string) {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	for _, tx := range txs {
		if pool.validateTx(tx) == nil {
			pool.pending[tx] = "queued"
		}
	}
}

func (pool *TxPool) Len() int { pool.mu.RLock(); defer pool.mu.RUnlock(); return len(pool.pending) }

func main() {
	mux := &TypeMux{subm: make(map[reflect.Type][]*TypeMuxSubscription)}
	genesis := &Block{Number: 0, Hash: "g", Td: 1}
	cm := &ChainManager{eventMux: mux, currentBlock: genesis, blocks: map[string]*Block{"g": genesis}}
	pool := NewTxPool(mux, cm.State)
	var txs []string
	for i := 0; i < 20; i++ {
		txs = append(txs, fmt.Sprintf("tx%02d", i))
	}
	pool.AddTransactions(txs)

	// The miner imports its own block 1; the pool revalidates on ChainHeadEvent.
	cm.InsertChain([]*Block{{Number: 1, Hash: "a1", ParentHash: "g", Td: 2, Txs: []string{"tx00", "tx01"}}})

	// The downloader imports a heavier fork from a peer: 1' and 2'.
	time.Sleep(5 * time.Millisecond)
	done := make(chan int)
	go func() {
		n, _ := cm.InsertChain([]*Block{
			{Number: 1, Hash: "b1", ParentHash: "g", Td: 2},
			{Number: 2, Hash: "b2", ParentHash: "b1", Td: 4, Txs: []string{"tx02"}},
		})
		done <- n
	}()
	fmt.Println("imported", <-done, "blocks, head", cm.CurrentBlock().Hash)
	fmt.Println("pending txs:", pool.Len())
}
