// Shape of pachyderm's bolt-backed hashtree (Glob, Get, PutFile) over a minimal bolt.
package main

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// --- a minimal bolt: the locking of DB.beginTx/beginRWTx/mmap ---

type DB struct {
	rwlock   sync.Mutex   // one writer at a time
	metalock sync.Mutex   // protects meta page access
	mmaplock sync.RWMutex // read txs hold it for reading; remapping takes it for writing
	data     map[string][]byte
	mapped   int
}

type Tx struct {
	db       *DB
	writable bool
	pending  map[string][]byte
}

func (db *DB) beginTx() *Tx {
	db.metalock.Lock()
	db.mmaplock.RLock() // released when the transaction closes
	db.metalock.Unlock()
	return &Tx{db: db}
}

func (db *DB) beginRWTx() *Tx {
	db.rwlock.Lock()
	return &Tx{db: db, writable: true, pending: map[string][]byte{}}
}

func (tx *Tx) rollback() {
	if tx.writable {
		tx.db.rwlock.Unlock()
		return
	}
	tx.db.mmaplock.RUnlock()
}

func (db *DB) mmap(minsz int) {
	db.mmaplock.Lock()
	defer db.mmaplock.Unlock()
	for db.mapped < minsz {
		db.mapped *= 2
	}
}

func (tx *Tx) commit() {
	size := 0
	for k, v := range tx.db.data {
		size += len(k) + len(v)
	}
	for k, v := range tx.pending {
		size += len(k) + len(v)
	}
	if size > tx.db.mapped {
		tx.db.mmap(size)
	}
	for k, v := range tx.pending {
		tx.db.data[k] = v
	}
	tx.db.rwlock.Unlock()
}

func (tx *Tx) Get(k string) []byte    { return tx.db.data[k] }
func (tx *Tx) Put(k string, v []byte) { tx.pending[k] = v }

func (db *DB) View(fn func(*Tx) error) error {
	tx := db.beginTx()
	defer tx.rollback()
	return fn(tx)
}

func (db *DB) Update(fn func(*Tx) error) error {
	tx := db.beginRWTx()
	if err := fn(tx); err != nil {
		tx.rollback()
		return err
	}
	tx.commit()
	return nil
}

// --- hashtree ---

var errPathNotFound = errors.New("path not found")

type NodeProto struct {
	Name string
	Size int
}

type dbHashTree struct {
	*DB
}

func clean(p string) string { return path.Clean("/" + p) }

func isGlob(pattern string) bool { return strings.ContainsAny(pattern, `*?[\`) }

func get(tx *Tx, p string) (*NodeProto, error) {
	v := tx.Get(clean(p))
	if v == nil {
		return nil, errPathNotFound
	}
	return &NodeProto{Name: path.Base(p), Size: len(v)}, nil
}

func (h *dbHashTree) Get(p string) (*NodeProto, error) {
	var node *NodeProto
	err := h.View(func(tx *Tx) error {
		var err error
		node, err = get(tx, p)
		return err
	})
	return node, err
}

func (h *dbHashTree) glob(tx *Tx, pattern string) (map[string]*NodeProto, error) {
	time.Sleep(10 * time.Millisecond) // pattern compilation and directory checks
	if !isGlob(pattern) {
		node, err := h.Get(pattern)
		if err != nil {
			return nil, err
		}
		return map[string]*NodeProto{clean(pattern): node}, nil
	}
	res := map[string]*NodeProto{}
	keys := make([]string, 0, len(tx.db.data))
	for k := range tx.db.data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if ok, _ := path.Match(pattern, k); ok {
			res[k] = &NodeProto{Name: path.Base(k), Size: len(tx.Get(k))}
		}
	}
	return res, nil
}

func (h *dbHashTree) Glob(pattern string) (map[string]*NodeProto, error) {
	var result map[string]*NodeProto
	err := h.View(func(tx *Tx) error {
		var err error
		result, err = h.glob(tx, clean(pattern))
		return err
	})
	return result, err
}

func (h *dbHashTree) PutFile(p string, data []byte) error {
	return h.Update(func(tx *Tx) error {
		tx.Put(clean(p), data)
		return nil
	})
}

func main() {
	h := &dbHashTree{&DB{data: map[string][]byte{"/data/a.csv": []byte("1,2,3")}, mapped: 32}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // GlobFile from a pipeline worker
		defer wg.Done()
		res, err := h.Glob("/data/a.csv")
		fmt.Println("glob:", len(res), err)
	}()
	go func() { // a commit appending a large file
		defer wg.Done()
		time.Sleep(5 * time.Millisecond)
		fmt.Println("put:", h.PutFile("/data/b.csv", make([]byte, 4096)))
	}()
	wg.Wait()
}
