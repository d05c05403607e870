package branches

import "sync"

// A lock helper whose mode follows a field (buntdb's Tx.lock: Lock for a
// writable transaction, RLock otherwise), paired with an unlock helper
// that tests the same field. No annotation names the lock, so holding it
// in one of two modes is the helper's contract, not an inconsistent
// return. Silent.

type DB struct {
	mu     sync.RWMutex
	closed bool
}

type Tx struct {
	db       *DB
	writable bool
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

func (db *DB) Begin(writable bool) (*Tx, bool) {
	tx := &Tx{db: db, writable: writable}
	tx.lock()
	if db.closed {
		tx.unlock()
		return nil, false
	}
	return tx, true
}

func (tx *Tx) Commit() {
	tx.unlock()
}
