// Package tryacquire: a function that returns holding a lock exactly when
// it succeeds (the read lock goes with the transaction it returns) and
// releases it on every failure path acquires on success: no leak, and
// callers hold the lock where their test of the result says success.
package tryacquire

import "errors"

import "sync"

var errClosed = errors.New("closed")

type DB struct {
	metalock sync.Mutex
	mmaplock sync.RWMutex
	opened   bool
	data     []byte
}

type Tx struct{ db *DB }

// beginTx returns with mmaplock read-locked on success. Silent.
func (db *DB) beginTx() (*Tx, error) {
	db.metalock.Lock()
	db.mmaplock.RLock()
	if !db.opened {
		db.mmaplock.RUnlock()
		db.metalock.Unlock()
		return nil, errClosed
	}
	if db.data == nil {
		db.mmaplock.RUnlock()
		db.metalock.Unlock()
		return nil, errClosed
	}
	t := &Tx{db: db}
	db.metalock.Unlock()
	return t, nil
}

// Rollback releases the read lock its transaction holds.
func (t *Tx) Rollback() { t.db.mmaplock.RUnlock() }

// view checks the error and releases the lock through the transaction.
// Silent.
func (db *DB) view(fn func(*Tx) error) error {
	t, err := db.beginTx()
	if err != nil {
		return err
	}
	defer t.Rollback()
	return fn(t)
}

// remap write-locks mmaplock while it still holds a transaction's read
// lock on success: a self-deadlock on that path.
func (db *DB) remap() error {
	t, err := db.beginTx()
	if err != nil {
		return err
	}
	db.mmaplock.Lock() // want `Lock of DB.mmaplock while read-locked since`
	db.data = nil
	db.mmaplock.Unlock()
	t.Rollback()
	return nil
}

// leaky keeps the lock on a failure path: still a leak.
func (db *DB) leaky() (*Tx, error) {
	db.mmaplock.RLock()
	if !db.opened {
		return nil, errClosed // want `DB.mmaplock taken at tryacquire.go:\d+ is still held on this return path`
	}
	if db.data == nil {
		db.mmaplock.RUnlock()
		return nil, errClosed
	}
	return &Tx{db: db}, nil
}

var _ = []any{(*DB).view, (*DB).remap, (*DB).leaky}
