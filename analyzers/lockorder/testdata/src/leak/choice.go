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

// A flag of the receiver that the function does not set is a mode its
// caller chose, as a parameter is (logrus's MutexWrap, locking unless
// the logger was told not to).
type Journal struct {
	mu     sync.Mutex
	strict bool
}

func (j *Journal) begin() {
	if j.strict {
		j.mu.Lock()
	}
}

func (j *Journal) end() {
	if j.strict {
		j.mu.Unlock()
	}
}

// A flag the function flips itself is no mode: reported.
type Recorder struct {
	mu      sync.Mutex
	started bool
}

func (r *Recorder) start() { // want `the function returns with different locks held on different paths: Recorder.mu \(taken at choice.go:\d+\) held on some return paths only \[inconsistent-return\]`
	if !r.started {
		r.started = true
		r.mu.Lock()
	}
}
