// Fixed twin: PR #1529 applied (the batch error is an atomic.Value and the
// commit callback no longer takes the batch mutex).
// Shape of dgraph-io/badger PR #1529 ("fix(writeBatch): Avoid deadlock in
// commit callback"): WriteBatch.Flush holds the batch's embedded mutex and
// calls wb.commit -> Txn.CommitWith(wb.callback). When commitAndSend fails
// (here: writes blocked by a concurrent DropAll) CommitWith runs the callback
// inline, and WriteBatch.callback locks the same embedded mutex to record
// the error.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

var ErrBlockedWrites = errors.New("writes are blocked, possibly due to DropAll or Close")

type Entry struct {
	Key, Value []byte
}

type DB struct {
	blockWrites int32
	writeMu     sync.Mutex
	lsm         map[string][]byte
}

func Open() *DB { return &DB{lsm: map[string][]byte{}} }

func (db *DB) blockWrite()   { atomic.StoreInt32(&db.blockWrites, 1) }
func (db *DB) unblockWrite() { atomic.StoreInt32(&db.blockWrites, 0) }

func (db *DB) newTransaction(update bool) *Txn {
	return &Txn{db: db, update: update}
}

// Throttle bounds the number of in-flight commits of a WriteBatch.
type Throttle struct {
	wg     sync.WaitGroup
	errMu  sync.Mutex
	finErr error
}

func (t *Throttle) Do() error { t.wg.Add(1); return nil }
func (t *Throttle) Done(err error) {
	if err != nil {
		t.errMu.Lock()
		t.finErr = err
		t.errMu.Unlock()
	}
	t.wg.Done()
}
func (t *Throttle) Finish() error { t.wg.Wait(); return t.finErr }

type Txn struct {
	db        *DB
	update    bool
	writes    []*Entry
	discarded bool
}

func (txn *Txn) SetEntry(e *Entry) error {
	txn.writes = append(txn.writes, e)
	return nil
}

func (txn *Txn) Discard() { txn.discarded = true }

func (txn *Txn) commitAndSend() (func() error, error) {
	if atomic.LoadInt32(&txn.db.blockWrites) == 1 {
		return nil, ErrBlockedWrites
	}
	writes := txn.writes
	return func() error {
		txn.db.writeMu.Lock()
		defer txn.db.writeMu.Unlock()
		for _, e := range writes {
			txn.db.lsm[string(e.Key)] = e.Value
		}
		return nil
	}, nil
}

// CommitWith commits the transaction and calls cb with the result.
func (txn *Txn) CommitWith(cb func(error)) {
	defer txn.Discard()
	if len(txn.writes) == 0 {
		go cb(nil)
		return
	}
	commitCb, err := txn.commitAndSend()
	if err != nil {
		cb(err)
		return
	}
	go func() { cb(commitCb()) }()
}

type WriteBatch struct {
	sync.Mutex
	txn      *Txn
	db       *DB
	throttle *Throttle
	err      atomic.Value // holds an error; read and written without the mutex
	finished bool
}

func (db *DB) NewWriteBatch() *WriteBatch {
	return &WriteBatch{db: db, txn: db.newTransaction(true), throttle: &Throttle{}}
}

func (wb *WriteBatch) Error() error {
	if err, ok := wb.err.Load().(error); ok {
		return err
	}
	return nil
}

func (wb *WriteBatch) callback(err error) {
	defer wb.throttle.Done(err)
	if err == nil {
		return
	}
	if wb.Error() != nil {
		return
	}
	wb.err.Store(err)
}

func (wb *WriteBatch) Set(k, v []byte) error {
	wb.Lock()
	defer wb.Unlock()
	return wb.txn.SetEntry(&Entry{Key: k, Value: v})
}

func (wb *WriteBatch) commit() error {
	if err := wb.Error(); err != nil {
		return err
	}
	if err := wb.throttle.Do(); err != nil {
		return err
	}
	wb.txn.CommitWith(wb.callback)
	wb.txn = wb.db.newTransaction(true)
	return wb.Error()
}

func (wb *WriteBatch) Flush() error {
	wb.Lock()
	_ = wb.commit()
	wb.finished = true
	wb.Unlock()
	if err := wb.throttle.Finish(); err != nil {
		return err
	}
	return wb.Error()
}

func main() {
	db := Open()
	wb := db.NewWriteBatch()
	for i := 0; i < 3; i++ {
		wb.Set([]byte(fmt.Sprintf("key%d", i)), []byte("v"))
	}
	// DropAll has started and blocked writes while the batch is flushed.
	db.blockWrite()
	err := wb.Flush()
	db.unblockWrite()
	fmt.Println("flush returned:", err)
}
