// Project: boltdb/bolt, later etcd-io/bbolt (db.go), 2014 (approximate, before managed transactions).
// Bug: DB.Update only rolls back when fn returns an error, so when fn panics and the caller recovers,
// the Tx is never closed and db.rwlock stays held; the next Update on the same goroutine locks rwlock again and blocks forever.
package main

import (
	"errors"
	"fmt"
	"sync"
)

var ErrTxClosed = errors.New("tx closed")

type meta struct {
	txid int
}

type DB struct {
	rwlock   sync.Mutex   // Allows only one writer at a time.
	metalock sync.Mutex   // Protects meta page access.
	mmaplock sync.RWMutex // Protects mmap access during remapping.

	meta    meta
	buckets map[string]map[string]string
}

type Tx struct {
	db       *DB
	writable bool
	meta     meta
	pending  map[string]map[string]string
}

// Begin starts a new transaction.
func (db *DB) Begin(writable bool) (*Tx, error) {
	if writable {
		return db.beginRWTx()
	}
	return db.beginTx()
}

func (db *DB) beginTx() (*Tx, error) {
	db.metalock.Lock()
	defer db.metalock.Unlock()
	db.mmaplock.RLock()
	return &Tx{db: db, meta: db.meta}, nil
}

func (db *DB) beginRWTx() (*Tx, error) {
	// Obtain writer lock. This is released by the transaction when it closes.
	db.rwlock.Lock()

	db.metalock.Lock()
	defer db.metalock.Unlock()
	t := &Tx{db: db, writable: true, meta: db.meta, pending: map[string]map[string]string{}}
	t.meta.txid++
	return t, nil
}

// Put sets a key in a bucket.
func (t *Tx) Put(bucket, key, value string) error {
	if t.db == nil {
		return ErrTxClosed
	}
	if t.pending[bucket] == nil {
		t.pending[bucket] = map[string]string{}
	}
	t.pending[bucket][key] = value
	return nil
}

// Rollback closes the transaction and ignores all previous updates.
func (t *Tx) Rollback() error {
	if t.db == nil {
		return ErrTxClosed
	}
	t.rollback()
	return nil
}

func (t *Tx) rollback() {
	if t.writable {
		t.db.rwlock.Unlock()
	} else {
		t.db.mmaplock.RUnlock()
	}
	t.db = nil
}

// Commit writes all changes and closes the transaction.
func (t *Tx) Commit() error {
	if t.db == nil {
		return ErrTxClosed
	}
	db := t.db
	for b, kv := range t.pending {
		if db.buckets[b] == nil {
			db.buckets[b] = map[string]string{}
		}
		for k, v := range kv {
			db.buckets[b][k] = v
		}
	}
	db.metalock.Lock()
	db.meta = t.meta
	db.metalock.Unlock()
	t.db = nil
	db.rwlock.Unlock()
	return nil
}

// Update executes a function within the context of a read-write managed transaction.
func (db *DB) Update(fn func(*Tx) error) error {
	t, err := db.Begin(true)
	if err != nil {
		return err
	}

	// Make sure the transaction rolls back in the event of a panic.
	defer func() {
		if t.db != nil {
			t.rollback()
		}
	}()

	// Attempt to execute the function. If an error occurs then rollback.
	if err := fn(t); err != nil {
		t.Rollback()
		return err
	}
	return t.Commit()
}

// handle runs one request and turns a panic into an error, as a server loop does.
func handle(db *DB, req map[string]string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("request panicked: %v", r)
		}
	}()
	return db.Update(func(tx *Tx) error {
		var counts map[string]int
		for k, v := range req {
			tx.Put("widgets", k, v)
			if k == "count" {
				counts[k]++ // nil map write: panics inside the transaction
			}
		}
		return nil
	})
}

func main() {
	db := &DB{buckets: map[string]map[string]string{}}
	reqs := []map[string]string{
		{"name": "a"},
		{"count": "1"},
		{"name": "b"},
	}
	for i, req := range reqs {
		err := handle(db, req)
		fmt.Println("request", i, "err:", err)
	}
	fmt.Println("txid", db.meta.txid, "widgets", db.buckets["widgets"])
}
