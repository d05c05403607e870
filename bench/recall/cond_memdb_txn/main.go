// Pattern: hashicorp/go-memdb MemDB.Txn(write bool) / Txn.Abort / Txn.Commit.
// Txn does `if write { db.writer.Lock() }`; Abort/Commit do
// `if txn.write { txn.db.writer.Unlock() }` and clear the txn so the usual
// `defer txn.Abort()` after Commit is a no-op. Read transactions work on an
// atomically published immutable root and never take the writer lock, so a
// write transaction may open read transactions (as Consul's state store
// does for lookups) without self-deadlock.
package main

import (
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
)

type MemDB struct {
	writer sync.Mutex
	root   atomic.Pointer[map[string]int]
}

type Txn struct {
	db    *MemDB
	write bool
	root  map[string]int // nil once committed/aborted
}

func NewMemDB() *MemDB {
	db := &MemDB{}
	m := map[string]int{}
	db.root.Store(&m)
	return db
}

func (db *MemDB) Txn(write bool) *Txn {
	if write {
		db.writer.Lock()
	}
	root := *db.root.Load()
	if write {
		root = maps.Clone(root) // private copy for the writer
	}
	return &Txn{db: db, write: write, root: root}
}

func (t *Txn) Get(k string) (int, bool) { v, ok := t.root[k]; return v, ok }

func (t *Txn) Insert(k string, v int) {
	if !t.write {
		panic("insert in read-only txn")
	}
	t.root[k] = v
}

func (t *Txn) Abort() {
	if t.root == nil {
		return
	}
	if t.write {
		t.db.writer.Unlock()
	}
	t.root = nil
}

func (t *Txn) Commit() {
	if t.root == nil {
		return
	}
	if t.write {
		r := t.root
		t.db.root.Store(&r)
		t.db.writer.Unlock()
	}
	t.root = nil
}

// lookupCommitted opens its own read txn; callable from inside a write txn.
func lookupCommitted(db *MemDB, k string) int {
	rtx := db.Txn(false) // no writer lock
	defer rtx.Abort()
	v, _ := rtx.Get(k)
	return v
}

func incr(db *MemDB, k string) {
	txn := db.Txn(true)
	defer txn.Abort() // no-op after Commit
	committed := lookupCommitted(db, k)
	cur, _ := txn.Get(k)
	if cur != committed {
		panic("writer observed uncommitted data from another writer")
	}
	txn.Insert(k, cur+1)
	txn.Commit()
}

func main() {
	db := NewMemDB()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				incr(db, fmt.Sprintf("k%d", i%4))
				_ = lookupCommitted(db, "k0")
			}
		}(g)
	}
	wg.Wait()
	rtx := db.Txn(false)
	defer rtx.Abort()
	total := 0
	for i := 0; i < 4; i++ {
		v, _ := rtx.Get(fmt.Sprintf("k%d", i))
		total += v
	}
	fmt.Println("total", total)
}
