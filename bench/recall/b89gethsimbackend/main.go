// Project: ethereum/go-ethereum (accounts/abi/bind/backends/simulated.go), geth v1.9.13, April 2020.
// Bug: CodeAt, BalanceAt, NonceAt and StorageAt take b.mu and then resolve the requested block through stateByBlockNumber, which for any block other than the current head calls the exported BlockByNumber, and BlockByNumber locks b.mu again, so querying historical state through the simulated backend hangs its caller (PR #20983, "accounts: add blockByNumberNoLock() to avoid double-lock").
package main

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
)

type Address [20]byte
type Hash [32]byte

type Block struct {
	number *big.Int
	root   Hash
}

func (b *Block) Number() *big.Int { return new(big.Int).Set(b.number) }
func (b *Block) Root() Hash       { return b.root }

type StateDB struct{ balances map[Address]*big.Int }

func (s *StateDB) GetBalance(a Address) *big.Int {
	if v, ok := s.balances[a]; ok {
		return new(big.Int).Set(v)
	}
	return new(big.Int)
}

// BlockChain is the in-memory chain the simulated backend drives.
type BlockChain struct {
	blocks []*Block
	states map[Hash]*StateDB
}

func (bc *BlockChain) CurrentBlock() *Block { return bc.blocks[len(bc.blocks)-1] }

func (bc *BlockChain) GetBlockByNumber(n uint64) *Block {
	if n < uint64(len(bc.blocks)) {
		return bc.blocks[n]
	}
	return nil
}

func (bc *BlockChain) State() (*StateDB, error) { return bc.StateAt(bc.CurrentBlock().Root()) }

func (bc *BlockChain) StateAt(root Hash) (*StateDB, error) {
	if s, ok := bc.states[root]; ok {
		return s, nil
	}
	return nil, errors.New("missing trie node")
}

var errBlockDoesNotExist = errors.New("block does not exist in blockchain")

// SimulatedBackend implements bind.ContractBackend for tests.
type SimulatedBackend struct {
	blockchain *BlockChain

	mu           sync.Mutex
	pendingBlock *Block
	pendingState *StateDB
}

func NewSimulatedBackend(alloc map[Address]*big.Int) *SimulatedBackend {
	genesis := &Block{number: big.NewInt(0), root: Hash{0}}
	st := &StateDB{balances: alloc}
	bc := &BlockChain{blocks: []*Block{genesis}, states: map[Hash]*StateDB{genesis.root: st}}
	b := &SimulatedBackend{blockchain: bc}
	b.rollback()
	return b
}

func (b *SimulatedBackend) rollback() {
	cur := b.blockchain.CurrentBlock()
	b.pendingBlock = &Block{number: new(big.Int).Add(cur.Number(), big.NewInt(1)), root: cur.root}
	b.pendingState, _ = b.blockchain.State()
}

// SendTransaction is reduced to a value transfer applied to the pending block.
func (b *SimulatedBackend) SendTransaction(ctx context.Context, to Address, value *big.Int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := &StateDB{balances: map[Address]*big.Int{}}
	for a, v := range b.pendingState.balances {
		next.balances[a] = new(big.Int).Set(v)
	}
	next.balances[to] = new(big.Int).Add(next.GetBalance(to), value)
	b.pendingBlock.root = Hash{byte(b.pendingBlock.number.Uint64()), 1}
	b.pendingState = next
	return nil
}

// Commit imports all the pending transactions as a single block.
func (b *SimulatedBackend) Commit() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.blockchain.blocks = append(b.blockchain.blocks, b.pendingBlock)
	b.blockchain.states[b.pendingBlock.root] = b.pendingState
	b.rollback()
}

// stateByBlockNumber retrieves a state by a given blocknumber.
func (b *SimulatedBackend) stateByBlockNumber(ctx context.Context, blockNumber *big.Int) (*StateDB, error) {
	if blockNumber == nil || blockNumber.Cmp(b.blockchain.CurrentBlock().Number()) == 0 {
		return b.blockchain.State()
	}
	block, err := b.BlockByNumber(ctx, blockNumber)
	if err != nil {
		return nil, err
	}
	return b.blockchain.StateAt(block.Root())
}

// BalanceAt returns the wei balance of a certain account in the blockchain.
func (b *SimulatedBackend) BalanceAt(ctx context.Context, contract Address, blockNumber *big.Int) (*big.Int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()

	statedb, err := b.stateByBlockNumber(ctx, blockNumber)
	if err != nil {
		return nil, err
	}
	return statedb.GetBalance(contract), nil
}

// BlockByNumber retrieves a block from the database by number.
func (b *SimulatedBackend) BlockByNumber(ctx context.Context, number *big.Int) (*Block, error) {
	b.mu.Lock()
	defer b.mu.Unlock()

	if number == nil || number.Cmp(b.pendingBlock.Number()) == 0 {
		return b.blockchain.CurrentBlock(), nil
	}
	block := b.blockchain.GetBlockByNumber(uint64(number.Int64()))
	if block == nil {
		return nil, errBlockDoesNotExist
	}
	return block, nil
}

// ChainStateReader is the ethereum.ChainStateReader subset used by callers.
type ChainStateReader interface {
	BalanceAt(ctx context.Context, account Address, blockNumber *big.Int) (*big.Int, error)
}

func balanceHistory(ctx context.Context, r ChainStateReader, who Address, head int64) {
	for n := int64(0); n <= head; n++ {
		bal, err := r.BalanceAt(ctx, who, big.NewInt(n))
		fmt.Println("block", n, "balance", bal, err)
	}
}

func main() {
	alice := Address{0xaa}
	sim := NewSimulatedBackend(map[Address]*big.Int{alice: big.NewInt(1000)})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		sim.SendTransaction(ctx, alice, big.NewInt(10))
		sim.Commit()
	}
	balanceHistory(ctx, sim, alice, 2) // block 0 is historical: double lock
}
