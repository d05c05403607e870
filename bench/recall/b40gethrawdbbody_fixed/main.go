// Project: ethereum/go-ethereum, core/rawdb/accessors_chain.go (ReadCanonicalBodyRLP,
// ReadCanonicalHash), core/rawdb/freezer.go (freezer.ReadAncients / ModifyAncients),
// core/rawdb/database.go (freezerdb), core/rawdb/chain_iterator.go (iterateTransactions,
// the transaction indexer), geth v1.10.x before v1.10.16.
// Issue: ethereum/go-ethereum#24159 (geth hangs); fixed by PR #24189
// "core/rawdb: fix double-lock causing hang": "Doing ReadCanonicalHash inside
// ReadAncients is a no-no, causing a double-locking."
//
// ReadAncients runs its callback under the freezer's writeLock.RLock (line 117) so the
// ancient store cannot change while the callback reads it. ReadCanonicalBodyRLP's
// callback falls back to the key-value store for a block that is not frozen yet and
// computes the key with ReadCanonicalHash(db, number), which goes through the same
// ethdb.Reader interface into ReadAncients again and read-locks writeLock a second time
// (line 117 again, reached from line 191). If the chain freezer's ModifyAncients asks
// for writeLock.Lock (line 131) between the two read locks, the queued writer blocks the
// inner RLock, and the writer waits for the outer one: the indexer and the freezer hang,
// and with them every reader of the chain. main starts the indexer, then the freezer
// while the indexer's outer callback is reading the bodies table (a slow disk read).
//
// FIXED twin: the PR's fix, the callback reads the canonical hash straight from the
// key-value store (line 191) instead of calling ReadCanonicalHash.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

type Hash [32]byte

func BytesToHash(b []byte) (h Hash) { copy(h[32-min(len(b), 32):], b); return }

// ---- ethdb ----

type KeyValueReader interface {
	Get(key []byte) ([]byte, error)
}

type AncientReader interface {
	Ancient(kind string, number uint64) ([]byte, error)
}

type AncientWriteOp interface {
	AppendRaw(kind string, number uint64, item []byte) error
}

type AncientStore interface {
	AncientReader
	ReadAncients(fn func(AncientReader) error) error
	ModifyAncients(fn func(AncientWriteOp) error) (int64, error)
}

type KeyValueStore interface {
	KeyValueReader
	Put(key, value []byte) error
}

// Reader is ethdb.Reader: key-value reads plus ancient reads.
type Reader interface {
	KeyValueReader
	AncientReader
	ReadAncients(fn func(AncientReader) error) error
}

// ---- core/rawdb: memorydb, freezer, freezerdb ----

type memoryDB struct {
	lock sync.RWMutex
	db   map[string][]byte
}

func (m *memoryDB) Get(key []byte) ([]byte, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return m.db[string(key)], nil
}

func (m *memoryDB) Put(key, value []byte) error {
	m.lock.Lock()
	defer m.lock.Unlock()
	m.db[string(key)] = value
	return nil
}

type freezerTable struct {
	items map[uint64][]byte
	count uint64
}

// Retrieve reads an item from the table's index and data files (a disk read, slow).
func (t *freezerTable) Retrieve(item uint64) ([]byte, error) {
	time.Sleep(100 * time.Millisecond)
	if item >= t.count {
		return nil, errOutOfBounds
	}
	return t.items[item], nil
}

var errOutOfBounds = errors.New("out of bounds")

type freezer struct {
	writeLock sync.RWMutex
	tables    map[string]*freezerTable
}

// Ancient retrieves an ancient binary blob from the append-only immutable files.
func (f *freezer) Ancient(kind string, number uint64) ([]byte, error) {
	return f.tables[kind].Retrieve(number)
}

// ReadAncients runs the given read operation while ensuring that no writes take place
// on the underlying freezer.
func (f *freezer) ReadAncients(fn func(AncientReader) error) (err error) {
	f.writeLock.RLock()
	defer f.writeLock.RUnlock()
	return fn(f)
}

func (f *freezer) AppendRaw(kind string, number uint64, item []byte) error {
	t := f.tables[kind]
	t.items[number] = item
	t.count = number + 1
	return nil
}

// ModifyAncients runs the given write operation.
func (f *freezer) ModifyAncients(fn func(AncientWriteOp) error) (int64, error) {
	f.writeLock.Lock()
	defer f.writeLock.Unlock()
	if err := fn(f); err != nil {
		return 0, err
	}
	return 1, nil
}

type freezerdb struct {
	KeyValueStore
	AncientStore
}

// ---- core/rawdb: accessors_chain.go ----

const (
	freezerHashTable   = "hashes"
	freezerBodiesTable = "bodies"
)

func encodeBlockNumber(number uint64) []byte {
	enc := make([]byte, 8)
	binary.BigEndian.PutUint64(enc, number)
	return enc
}

func headerHashKey(number uint64) []byte {
	return append(append([]byte("h"), encodeBlockNumber(number)...), 'n')
}

func blockBodyKey(number uint64, hash Hash) []byte {
	return append(append([]byte("b"), encodeBlockNumber(number)...), hash[:]...)
}

// ReadCanonicalHash retrieves the hash assigned to a canonical block number.
func ReadCanonicalHash(db Reader, number uint64) Hash {
	var data []byte
	db.ReadAncients(func(reader AncientReader) error {
		data, _ = reader.Ancient(freezerHashTable, number)
		if len(data) == 0 {
			// Get it by hash from leveldb
			data, _ = db.Get(headerHashKey(number))
		}
		return nil
	})
	return BytesToHash(data)
}

// ReadCanonicalBodyRLP retrieves the block body (transactions and uncles) for the canonical
// block at number, in RLP encoding.
func ReadCanonicalBodyRLP(db Reader, number uint64) []byte {
	var data []byte
	db.ReadAncients(func(reader AncientReader) error {
		data, _ = reader.Ancient(freezerBodiesTable, number)
		if len(data) > 0 {
			return nil
		}
		// Block is not in ancients, read from leveldb by hash and number.
		// Note: ReadCanonicalHash cannot be used here because it also
		// calls ReadAncients internally.
		hash, _ := db.Get(headerHashKey(number))
		data, _ = db.Get(blockBodyKey(number, BytesToHash(hash)))
		return nil
	})
	return data
}

// ---- core/rawdb: chain_iterator.go and chain_freezer ----

// iterateTransactions is the transaction indexer's reader.
func iterateTransactions(db Reader, from, to uint64) int {
	n := 0
	for number := from; number < to; number++ {
		n += len(ReadCanonicalBodyRLP(db, number))
	}
	return n
}

// freeze moves the oldest block out of the key-value store into the freezer.
func freeze(db *freezerdb, number uint64) {
	db.ModifyAncients(func(op AncientWriteOp) error {
		hash, _ := db.Get(headerHashKey(number))
		op.AppendRaw(freezerHashTable, number, hash)
		body, _ := db.Get(blockBodyKey(number, BytesToHash(hash)))
		return op.AppendRaw(freezerBodiesTable, number, body)
	})
}

func main() {
	f := &freezer{tables: map[string]*freezerTable{
		freezerHashTable:   {items: map[uint64][]byte{}},
		freezerBodiesTable: {items: map[uint64][]byte{}},
	}}
	kv := &memoryDB{db: map[string][]byte{}}
	db := &freezerdb{KeyValueStore: kv, AncientStore: f}
	for n := uint64(0); n < 4; n++ {
		h := BytesToHash([]byte{byte(n + 1)})
		kv.Put(headerHashKey(n), h[:])
		kv.Put(blockBodyKey(n, h), []byte{0xc0, byte(n)})
	}
	// block 0 is already in the freezer
	f.AppendRaw(freezerHashTable, 0, []byte{1})
	f.AppendRaw(freezerBodiesTable, 0, []byte{0xc0, 0})

	done := make(chan int)
	go func() { done <- iterateTransactions(db, 1, 3) }() // tx indexer
	time.Sleep(50 * time.Millisecond)
	go freeze(db, 1) // chain freezer
	fmt.Println("indexed body bytes:", <-done)
}
