// Project: boltdb/bolt, later etcd-io/bbolt (db.go), June 2014 (PR #194 "Fix deadlock on remmap").
// Bug: RWTransaction takes metalock and then rwlock, and removeTransaction takes metalock while the
// closing reader still holds mmaplock. A committing writer that remaps waits for mmaplock, so the
// reader, a second writer and the committing writer wait on each other forever.
package main

import (
	"fmt"
	"sync"
	"time"
)

type meta struct {
	txid int
	pgid int
}

type DB struct {
	rwlock   sync.Mutex   // Allows only one writer at a time.
	metalock sync.Mutex   // Protects meta page access.
	mmaplock sync.RWMutex // Protects mmap access during remapping.

	meta         meta
	datasz       int
	transactions []*Transaction
}

type Transaction struct {
	db   *DB
	meta meta
}

type RWTransaction struct {
	Transaction
	pending int
}

// Transaction creates a read-only transaction.
func (db *DB) Transaction() (*Transaction, error) {
	db.metalock.Lock()
	defer db.metalock.Unlock()

	// Obtain a read-only lock on the mmap. When the mmap is remapped it will
	// obtain a write lock so all transactions must be closed before it can be remapped.
	db.mmaplock.RLock()

	t := &Transaction{db: db, meta: db.meta}
	db.transactions = append(db.transactions, t)
	return t, nil
}

// RWTransaction creates a read/write transaction.
func (db *DB) RWTransaction() (*RWTransaction, error) {
	// Obtain writer lock. This is released by the RWTransaction when it closes.
	// Once we have the writer lock then we can lock the meta pages.
	db.rwlock.Lock()

	db.metalock.Lock()
	defer db.metalock.Unlock()

	t := &RWTransaction{Transaction: Transaction{db: db, meta: db.meta}}
	t.meta.txid++
	return t, nil
}

// removeTransaction removes a transaction from the database.
func (db *DB) removeTransaction(t *Transaction) {
	// Release the read lock on the mmap.
	db.mmaplock.RUnlock()

	db.metalock.Lock()
	defer db.metalock.Unlock()

	for i, txn := range db.transactions {
		if txn == t {
			db.transactions = append(db.transactions[:i], db.transactions[i+1:]...)
			break
		}
	}
}

// mmap opens the underlying memory-mapped file and initializes the meta references.
func (db *DB) mmap(minsz int) error {
	db.mmaplock.Lock()
	defer db.mmaplock.Unlock()
	if minsz > db.datasz {
		db.datasz = minsz * 2
	}
	return nil
}

// Close closes a read-only transaction.
func (t *Transaction) Close() {
	if t.db == nil {
		return
	}
	t.db.removeTransaction(t)
	t.db = nil
}

// allocate returns a contiguous block of pages, remapping if the file is too small.
func (t *RWTransaction) allocate(count int) error {
	t.meta.pgid += count
	if t.meta.pgid > t.db.datasz {
		if err := t.db.mmap(t.meta.pgid); err != nil {
			return err
		}
	}
	return nil
}

// Commit writes all changes to disk.
func (t *RWTransaction) Commit() error {
	db := t.db
	if err := t.allocate(t.pending); err != nil {
		return err
	}
	db.metalock.Lock()
	db.meta = t.meta
	db.metalock.Unlock()
	t.db = nil
	db.rwlock.Unlock()
	return nil
}

func main() {
	db := &DB{datasz: 4}
	var wg sync.WaitGroup
	readerOpen := make(chan struct{})
	writerOpen := make(chan struct{})

	wg.Add(3)
	go func() { // long-running reader
		defer wg.Done()
		t, _ := db.Transaction()
		close(readerOpen)
		time.Sleep(200 * time.Millisecond)
		t.Close()
	}()
	go func() { // writer whose commit grows the file
		defer wg.Done()
		<-readerOpen
		t, _ := db.RWTransaction()
		close(writerOpen)
		t.pending = 16
		t.Commit()
	}()
	go func() { // second writer
		defer wg.Done()
		<-writerOpen
		time.Sleep(50 * time.Millisecond)
		t, _ := db.RWTransaction()
		t.pending = 1
		t.Commit()
	}()
	wg.Wait()
	fmt.Println("ok, txid", db.meta.txid, "datasz", db.datasz)
}
