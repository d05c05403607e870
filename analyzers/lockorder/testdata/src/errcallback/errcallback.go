// Package errcallback: an error callback that returns at once when given
// no error and locks otherwise, called by a commit on its failure branch
// with the error it found. The callback's branch is decided at the call:
// it takes its lock wherever the commit fails, under the lock the
// flusher holds into the commit (badger's WriteBatch.Flush into
// Txn.CommitWith(wb.callback)).
package errcallback

import (
	"errors"
	"sync"
	"sync/atomic"
)

var errBlocked = errors.New("writes blocked")

type Txn struct {
	blocked int32
	writes  []string
}

func (txn *Txn) send() error {
	if atomic.LoadInt32(&txn.blocked) == 1 {
		return errBlocked
	}
	return nil
}

// CommitWith calls cb inline when the send fails, in a goroutine when it
// succeeds.
func (txn *Txn) CommitWith(cb func(error)) {
	if err := txn.send(); err != nil {
		cb(err)
		return
	}
	go cb(nil)
}

// CommitQuietly calls cb inline with no error only.
func (txn *Txn) CommitQuietly(cb func(error)) {
	if txn.send() != nil {
		return
	}
	cb(nil)
}

type WriteBatch struct {
	sync.Mutex
	txn *Txn
	err error
}

func (wb *WriteBatch) callback(err error) {
	if err == nil {
		return
	}
	wb.Lock()
	defer wb.Unlock()
	wb.err = err
}

func (wb *WriteBatch) commit() error {
	if wb.err != nil {
		return wb.err
	}
	wb.txn.CommitWith(wb.callback)
	return nil
}

func (wb *WriteBatch) Flush() error {
	wb.Lock()
	defer wb.Unlock()
	return wb.commit() // want `WriteBatch.Mutex locked again by WriteBatch.commit -> Txn.CommitWith -> WriteBatch.callback \(at errcallback.go:\d+`
}

// Given nil, the callback returns before its lock.
func (wb *WriteBatch) FlushQuietly() {
	wb.Lock()
	defer wb.Unlock()
	wb.txn.CommitQuietly(wb.callback)
}

// The fix: the error is kept without the batch's lock.
type FixedBatch struct {
	sync.Mutex
	txn *Txn
	err atomic.Value
}

func (fb *FixedBatch) callback(err error) {
	if err == nil {
		return
	}
	fb.err.Store(err)
}

func (fb *FixedBatch) Flush() {
	fb.Lock()
	defer fb.Unlock()
	fb.txn.CommitWith(fb.callback)
}
