package gatelock

import "sync"

// A function that lets a caller's lock go on some paths only is no proof
// that the lock is held whenever it runs: a store's Abort unlocks the
// writer lock for a write transaction and the read lock for a read one.
// The decision logger opens a read transaction under its mask lock and
// aborts it; a commit, under the writer lock, write-locks the data and
// runs the trigger that takes the mask lock (OPA's decision log and
// bundle activation). The writer lock is no gate of the logger's order:
// the inversion is reported.
type txStore struct {
	rmu  sync.RWMutex
	wmu  sync.Mutex
	data map[string]string
	mask *maskLogger
}

type txn struct{ write bool }

func (db *txStore) begin(write bool) *txn {
	if write {
		db.wmu.Lock()
	} else {
		db.rmu.RLock()
	}
	return &txn{write: write}
}

func (db *txStore) abort(t *txn) {
	if t.write {
		db.wmu.Unlock()
	} else {
		db.rmu.RUnlock()
	}
}

func (db *txStore) commit(t *txn) {
	if t.write {
		db.rmu.Lock()
		db.mask.invalidate()
		db.rmu.Unlock()
		db.wmu.Unlock()
	} else {
		db.rmu.RUnlock()
	}
}

type maskLogger struct {
	mu    sync.Mutex
	db    *txStore
	rules string
}

func (m *maskLogger) invalidate() {
	m.mu.Lock()
	m.rules = ""
	m.mu.Unlock()
}

func (m *maskLogger) log() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rules == "" {
		t := m.db.begin(false) // want `lock order inversion: txStore.rmu then maskLogger.mu in txStore.commit`
		m.rules = m.db.data["mask"]
		m.db.abort(t)
	}
}

func activate(db *txStore) {
	t := db.begin(true)
	db.data["policy"] = "rev2"
	db.commit(t)
}
