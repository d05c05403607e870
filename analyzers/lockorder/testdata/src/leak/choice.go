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
