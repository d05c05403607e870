// Project: etcd-io/bbolt (formerly boltdb/bolt)
// Bug: DB.Close acquired mmaplock (write) before metalock, while beginTx
//      acquires metalock and then mmaplock.RLock. A read-only transaction
//      that starts while the database is being closed deadlocks with Close
//      (AB-BA between metalock and mmaplock).
// Fix: Close takes rwlock, then metalock, then mmaplock -- the same order the
//      transactions use ("We obtain the meta lock before the mmap lock because
//      that's the order that the write transaction will obtain them").

package b18bboltclose_fixed

import (
	"errors"
	"sync"
	"testing"
	"time"
)

var (
	ErrDatabaseNotOpen = errors.New("database not open")
	ErrTxClosed        = errors.New("tx closed")
)

// testHookReadMeta is invoked while beginTx copies the meta page; tests use it
// to simulate a slow page fault on the memory map.
var testHookReadMeta func()

type pgid uint64
type txid uint64

type meta struct {
	magic    uint32
	version  uint32
	pageSize uint32
	root     pgid
	freelist pgid
	pgid     pgid
	txid     txid
}

func (m *meta) copy(dest *meta) { *dest = *m }

type Stats struct {
	TxN     int
	OpenTxN int
}

type DB struct {
	path     string
	opened   bool
	readOnly bool
	data     []byte
	datasz   int
	meta0    *meta
	meta1    *meta
	txs      []*Tx
	stats    Stats

	rwlock   sync.Mutex   // Allows only one writer at a time.
	metalock sync.Mutex   // Protects meta page access.
	mmaplock sync.RWMutex // Protects mmap access during remapping.
	statlock sync.RWMutex // Protects stats access.
}

type Tx struct {
	writable bool
	db       *DB
	meta     *meta
}

func Open(path string) *DB {
	m := &meta{magic: 0xED0CDAED, version: 2, pageSize: 4096, root: 3, freelist: 2, pgid: 4, txid: 1}
	return &DB{path: path, opened: true, data: make([]byte, 16*4096), datasz: 16 * 4096, meta0: m, meta1: m}
}

func (db *DB) meta() *meta {
	if testHookReadMeta != nil {
		testHookReadMeta()
	}
	if db.meta0.txid > db.meta1.txid {
		return db.meta0
	}
	return db.meta1
}

// Begin starts a new transaction.
func (db *DB) Begin(writable bool) (*Tx, error) {
	if writable {
		return nil, errors.New("read-write transactions not supported in this build")
	}
	return db.beginTx()
}

func (db *DB) beginTx() (*Tx, error) {
	// Lock the meta pages while we initialize the transaction. We obtain
	// the meta lock before the mmap lock because that's the order that the
	// write transaction will obtain them.
	db.metalock.Lock()

	// Obtain a read-only lock on the mmap. When the mmap is remapped it will
	// obtain a write lock so all transactions must finish before it can be
	// remapped.
	t := &Tx{db: db, meta: &meta{}}
	db.meta().copy(t.meta)
	db.mmaplock.RLock()

	if !db.opened {
		db.mmaplock.RUnlock()
		db.metalock.Unlock()
		return nil, ErrDatabaseNotOpen
	}
	db.txs = append(db.txs, t)
	n := len(db.txs)
	db.metalock.Unlock()

	db.statlock.Lock()
	db.stats.TxN++
	db.stats.OpenTxN = n
	db.statlock.Unlock()
	return t, nil
}

func (db *DB) removeTx(tx *Tx) {
	db.mmaplock.RUnlock()
	db.metalock.Lock()
	for i, t := range db.txs {
		if t == tx {
			db.txs = append(db.txs[:i], db.txs[i+1:]...)
			break
		}
	}
	n := len(db.txs)
	db.metalock.Unlock()

	db.statlock.Lock()
	db.stats.OpenTxN = n
	db.statlock.Unlock()
}

func (tx *Tx) Rollback() error {
	if tx.db == nil {
		return ErrTxClosed
	}
	tx.db.removeTx(tx)
	tx.db = nil
	return nil
}

// Close releases all database resources. It will block waiting for any open
// transactions to finish before closing the database and returning.
func (db *DB) Close() error {
	db.rwlock.Lock()
	defer db.rwlock.Unlock()

	db.metalock.Lock()
	defer db.metalock.Unlock()

	db.mmaplock.Lock()
	defer db.mmaplock.Unlock()

	return db.close()
}

func (db *DB) close() error {
	if !db.opened {
		return nil
	}
	db.opened = false
	db.data, db.datasz = nil, 0
	db.meta0, db.meta1 = nil, nil
	return nil
}

func TestCloseWhileBeginningReadTx(t *testing.T) {
	db := Open("/tmp/bolt.db")
	testHookReadMeta = func() { time.Sleep(50 * time.Millisecond) }
	defer func() { testHookReadMeta = nil }()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // reader
		defer wg.Done()
		tx, err := db.Begin(false)
		if err != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
		_ = tx.Rollback()
	}()
	go func() { // shutdown path
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		_ = db.Close()
	}()
	wg.Wait()
}
