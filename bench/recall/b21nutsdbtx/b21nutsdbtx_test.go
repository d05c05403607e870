// Project: nutsdb (tx.go, db.go)
// Bug: a writable Tx holds db.mu from Begin() until Commit()/Rollback().
// Commit() validates the batch first and returns ErrTxnTooBig (and ErrKeyEmpty)
// straight away, before the deferred cleanup that calls tx.unlock() is set up;
// db.managed() does not roll back a failed Commit, so db.mu stays locked and
// the next db.Update() blocks forever in Begin().
// Fix: install the deferred handleErr/unlock at the top of Commit() so every
// return path releases db.mu.

package b21nutsdbtx

import (
	"errors"
	"sync"
	"testing"
)

var (
	ErrTxClosed    = errors.New("tx is closed")
	ErrTxnTooBig   = errors.New("Txn is too big to fit into one request")
	ErrKeyEmpty    = errors.New("key cannot be empty")
	ErrNotFoundKey = errors.New("key not found in the bucket")
)

type Options struct {
	Dir           string
	MaxBatchCount int64
	SegmentSize   int64
}

type Entry struct {
	Bucket string
	Key    []byte
	Value  []byte
}

type DB struct {
	opt    Options
	mu     sync.RWMutex
	data   map[string]map[string][]byte
	closed bool
	txSeq  uint64
}

func Open(opt Options) *DB {
	return &DB{opt: opt, data: make(map[string]map[string][]byte)}
}

type Tx struct {
	id            uint64
	db            *DB
	writable      bool
	pendingWrites []*Entry
}

func (db *DB) Begin(writable bool) (*Tx, error) {
	tx := &Tx{db: db, writable: writable}
	tx.lock()
	if db.closed {
		tx.unlock()
		return nil, errors.New("db is closed")
	}
	db.txSeq++
	tx.id = db.txSeq
	return tx, nil
}

func (tx *Tx) lock() {
	if tx.writable {
		tx.db.mu.Lock()
	} else {
		tx.db.mu.RLock()
	}
}

func (tx *Tx) unlock() {
	if tx.writable {
		tx.db.mu.Unlock()
	} else {
		tx.db.mu.RUnlock()
	}
}

func (tx *Tx) Put(bucket string, key, value []byte) error {
	if tx.db == nil {
		return ErrTxClosed
	}
	tx.pendingWrites = append(tx.pendingWrites, &Entry{Bucket: bucket, Key: key, Value: value})
	return nil
}

func (tx *Tx) Get(bucket string, key []byte) ([]byte, error) {
	if v, ok := tx.db.data[bucket][string(key)]; ok {
		return v, nil
	}
	return nil, ErrNotFoundKey
}

func (tx *Tx) handleErr(err error) {
	_ = err // would be reported to the error handler option
}

func (tx *Tx) Commit() (err error) {
	if tx.db == nil {
		return ErrTxClosed
	}
	writesLen := int64(len(tx.pendingWrites))
	if writesLen > tx.db.opt.MaxBatchCount {
		return ErrTxnTooBig
	}
	for _, e := range tx.pendingWrites {
		if len(e.Key) == 0 {
			return ErrKeyEmpty
		}
	}

	defer func() {
		if err != nil {
			tx.handleErr(err)
		}
		tx.unlock()
		tx.db = nil
		tx.pendingWrites = nil
	}()

	for _, e := range tx.pendingWrites {
		b := tx.db.data[e.Bucket]
		if b == nil {
			b = make(map[string][]byte)
			tx.db.data[e.Bucket] = b
		}
		b[string(e.Key)] = e.Value
	}
	return nil
}

func (tx *Tx) Rollback() error {
	if tx.db == nil {
		return ErrTxClosed
	}
	tx.unlock()
	tx.db = nil
	tx.pendingWrites = nil
	return nil
}

func (db *DB) managed(writable bool, fn func(tx *Tx) error) (err error) {
	tx, err := db.Begin(writable)
	if err != nil {
		return err
	}
	if err = fn(tx); err == nil {
		err = tx.Commit()
	} else if errRollback := tx.Rollback(); errRollback != nil {
		err = errRollback
	}
	return err
}

func (db *DB) Update(fn func(tx *Tx) error) error { return db.managed(true, fn) }
func (db *DB) View(fn func(tx *Tx) error) error   { return db.managed(false, fn) }

func TestUpdateAfterTooBigTxn(t *testing.T) {
	db := Open(Options{Dir: "/tmp/nutsdb", MaxBatchCount: 4, SegmentSize: 8 << 20})

	done := make(chan struct{})
	go func() {
		defer close(done)
		err := db.Update(func(tx *Tx) error {
			for i := 0; i < 10; i++ {
				if err := tx.Put("bucket", []byte{'k', byte('0' + i)}, []byte("v")); err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, ErrTxnTooBig) {
			t.Errorf("expected ErrTxnTooBig, got %v", err)
		}
		_ = db.Update(func(tx *Tx) error {
			return tx.Put("bucket", []byte("k"), []byte("v"))
		})
	}()
	<-done
}
