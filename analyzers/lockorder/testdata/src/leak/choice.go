package leak

import "sync"

// A lock taken exactly when a parameter asks for it is the caller's
// choice, not an inconsistent return: a write transaction holds the
// writer lock until Commit or Abort (go-memdb's Txn(write)).
type MemDB struct {
	writer sync.Mutex
	root   map[string]int
}

type Txn struct {
	db    *MemDB
	write bool
}

func (db *MemDB) Txn(write bool) *Txn {
	if write {
		db.writer.Lock()
	}
	return &Txn{db: db, write: write}
}

func (t *Txn) Commit() {
	if t.write {
		t.db.writer.Unlock()
	}
}

// A field's value is not the caller's choice: reported.
type Journal struct {
	mu     sync.Mutex
	strict bool
}

func (j *Journal) begin() { // want `the function returns with different locks held on different paths: Journal.mu \(taken at choice.go:\d+\) held on some return paths only \[inconsistent-return\]`
	if j.strict {
		j.mu.Lock()
	}
}

// A Locker's own Lock method that locks unless its owner turned locking
// off (logrus's MutexWrap): the mode is the owner's, a flag the method
// does not set, and Unlock follows the same flag.
type MutexWrap struct {
	lock     sync.Mutex
	disabled bool
}

func (mw *MutexWrap) Lock() {
	if !mw.disabled {
		mw.lock.Lock()
	}
}

func (mw *MutexWrap) Unlock() {
	if !mw.disabled {
		mw.lock.Unlock()
	}
}

// A Lock method whose flag it flips itself is no mode: reported.
type OnceLock struct {
	mu      sync.Mutex
	started bool
}

func (o *OnceLock) Lock() { // want `the function returns with different locks held on different paths: OnceLock.mu \(taken at choice.go:\d+\) held on some return paths only \[inconsistent-return\]`
	if !o.started {
		o.started = true
		o.mu.Lock()
	}
}

func (o *OnceLock) Unlock() {}
