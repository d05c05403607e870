// Project: ethereum/go-ethereum (core/chain_manager.go ChainManager.Export, GetBlockByNumber, getBlockByNumber, InsertChain; admin.exportChain), geth 0.9.x / 1.0 era, mid 2015 (fix PR approximate, possibly #1220 "core: fix a lock annoyance and potential deadlock").
// Bug: ChainManager.Export read-locks self.mu for the whole export and fetches every block through the exported GetBlockByNumber, which read-locks self.mu again; when block import (InsertChain, which write-locks self.mu per block) queues behind the export, the nested RLock waits for the writer and the writer waits for the export, so admin.exportChain on a syncing node wedges both. The fix reads the blocks through the non-locking getBlockByNumber (later GetBlockByNumber stopped taking mu altogether).
package b100gethchainexportfixed

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"sync"
	"testing"
	"time"
)

type Hash [8]byte

type Block struct {
	number     uint64
	parentHash Hash
	difficulty *big.Int
	Td         *big.Int
}

func (b *Block) NumberU64() uint64 { return b.number }
func (b *Block) ParentHash() Hash  { return b.parentHash }
func (b *Block) Hash() (h Hash) {
	binary.BigEndian.PutUint64(h[:], b.number+1)
	return h
}
func (b *Block) EncodeRLP(w io.Writer) error {
	_, err := fmt.Fprintf(w, "block#%d;", b.number)
	return err
}

// BlockProcessor validates and executes a block (core.BlockProcessor).
type BlockProcessor interface {
	Process(block *Block) (logs []string, err error)
}

type ChainManager struct {
	blockDb   map[Hash]*Block // block-hash- prefix
	numberIdx map[uint64]Hash // block-num- prefix
	processor BlockProcessor

	mu           sync.RWMutex
	td           *big.Int
	currentBlock *Block
}

func (self *ChainManager) GetBlock(hash Hash) *Block { return self.blockDb[hash] }

func (self *ChainManager) GetBlockByNumber(num uint64) *Block {
	self.mu.RLock()
	defer self.mu.RUnlock()

	return self.getBlockByNumber(num)
}

// non blocking version
func (self *ChainManager) getBlockByNumber(num uint64) *Block {
	key, ok := self.numberIdx[num]
	if !ok {
		return nil
	}
	return self.GetBlock(key)
}

func (self *ChainManager) write(block *Block) { self.blockDb[block.Hash()] = block }

func (self *ChainManager) insert(block *Block) {
	self.numberIdx[block.NumberU64()] = block.Hash()
	self.currentBlock = block
}

// merge makes the ancestors of newBlock canonical (diff + insert in the real code).
func (self *ChainManager) merge(newBlock *Block) {
	for b := self.GetBlock(newBlock.ParentHash()); b != nil && self.numberIdx[b.NumberU64()] != b.Hash(); b = self.GetBlock(b.ParentHash()) {
		self.insert(b)
	}
}

// Export writes the active chain to the given writer.
func (self *ChainManager) Export(w io.Writer) error {
	self.mu.RLock()
	defer self.mu.RUnlock()

	last := self.currentBlock.NumberU64()
	for nr := uint64(0); nr <= last; nr++ {
		block := self.getBlockByNumber(nr)
		if block == nil {
			return fmt.Errorf("export failed on #%d: not found", nr)
		}
		if err := block.EncodeRLP(w); err != nil {
			return err
		}
	}
	return nil
}

func (self *ChainManager) InsertChain(chain []*Block) (int, error) {
	for i, block := range chain {
		block.Td = new(big.Int).Add(self.GetBlock(block.ParentHash()).Td, block.difficulty)
		if _, err := self.processor.Process(block); err != nil {
			return i, err
		}
		self.mu.Lock()
		self.write(block)
		if block.Td.Cmp(self.td) > 0 {
			if previous := self.getBlockByNumber(block.NumberU64() - 1); previous.Hash() != block.ParentHash() {
				// during split we merge two different chains and create the new canonical chain
				self.merge(block)
			}
			self.td = block.Td
			self.insert(block)
		}
		self.mu.Unlock()
	}
	return 0, nil
}

// processor signals once the block import is about to take the chain lock.
type processor struct{ processed chan struct{} }

func (p *processor) Process(*Block) ([]string, error) {
	close(p.processed)
	return nil, nil
}

// exportFile is the destination of admin.exportChain; after the genesis
// block has been written it lets the importer queue up on the chain lock.
type exportFile struct {
	bytes.Buffer
	once      sync.Once
	started   chan struct{}
	processed chan struct{}
}

func (f *exportFile) Write(p []byte) (int, error) {
	f.once.Do(func() {
		close(f.started)
		<-f.processed
		time.Sleep(100 * time.Millisecond) // InsertChain is now parked in mu.Lock
	})
	return f.Buffer.Write(p)
}

func TestB100gethchainexportFixed(t *testing.T) {
	proc := &processor{processed: make(chan struct{})}
	bc := &ChainManager{blockDb: map[Hash]*Block{}, numberIdx: map[uint64]Hash{}, processor: proc, td: big.NewInt(0)}
	var parent Hash
	for i := uint64(0); i < 3; i++ {
		b := &Block{number: i, parentHash: parent, difficulty: big.NewInt(10)}
		b.Td = big.NewInt(int64(10 * (i + 1)))
		bc.write(b)
		bc.insert(b)
		bc.td = b.Td
		parent = b.Hash()
	}

	out := &exportFile{started: make(chan struct{}), processed: proc.processed}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // admin.exportChain
		defer wg.Done()
		if err := bc.Export(out); err != nil {
			t.Error(err)
		}
	}()
	go func() { // downloader importing the next block
		defer wg.Done()
		<-out.started
		if _, err := bc.InsertChain([]*Block{{number: 3, parentHash: parent, difficulty: big.NewInt(10)}}); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	if bc.currentBlock.NumberU64() != 3 {
		t.Fatalf("head = %d, want 3", bc.currentBlock.NumberU64())
	}
}
