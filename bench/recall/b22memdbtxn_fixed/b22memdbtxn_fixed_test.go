// Project: hashicorp/go-memdb (write-transaction usage in a catalog store)
// Bug: MemDB.Txn(true) acquires db.writer and only Txn.Commit/Txn.Abort
//      release it. The catalog's EnsureService returned early on a failed
//      index lookup / validation without aborting the write transaction, so
//      db.writer stays locked and the next writer blocks forever.
// Fix: `defer txn.Abort()` right after opening the write transaction (Abort
//      is a no-op after Commit), as go-memdb's documentation recommends.

package b22memdbtxn_fixed

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

type table map[string]interface{}

type MemDB struct {
	writer sync.Mutex
	root   atomic.Pointer[map[string]table]
}

func NewMemDB(tables ...string) *MemDB {
	db := &MemDB{}
	root := map[string]table{}
	for _, t := range tables {
		root[t] = table{}
	}
	db.root.Store(&root)
	return db
}

type Txn struct {
	db       *MemDB
	write    bool
	rootTxn  map[string]table
	modified map[string]bool
	after    []func()
}

func (db *MemDB) Txn(write bool) *Txn {
	if write {
		db.writer.Lock()
	}
	cur := *db.root.Load()
	txn := &Txn{db: db, write: write, rootTxn: map[string]table{}, modified: map[string]bool{}}
	for name, t := range cur {
		txn.rootTxn[name] = t
	}
	return txn
}

func (txn *Txn) writableTable(name string) (table, error) {
	t, ok := txn.rootTxn[name]
	if !ok {
		return nil, fmt.Errorf("invalid table '%s'", name)
	}
	if !txn.modified[name] {
		cp := table{}
		for k, v := range t {
			cp[k] = v
		}
		txn.rootTxn[name] = cp
		txn.modified[name] = true
		t = cp
	}
	return t, nil
}

func (txn *Txn) Insert(tbl, id string, obj interface{}) error {
	if !txn.write {
		return errors.New("cannot insert in read-only transaction")
	}
	t, err := txn.writableTable(tbl)
	if err != nil {
		return err
	}
	t[id] = obj
	return nil
}

func (txn *Txn) First(tbl, id string) (interface{}, error) {
	t, ok := txn.rootTxn[tbl]
	if !ok {
		return nil, fmt.Errorf("invalid table '%s'", tbl)
	}
	return t[id], nil
}

func (txn *Txn) Defer(fn func()) { txn.after = append(txn.after, fn) }

func (txn *Txn) Abort() {
	if !txn.write || txn.rootTxn == nil {
		return
	}
	txn.rootTxn = nil
	txn.modified = nil
	txn.db.writer.Unlock()
}

func (txn *Txn) Commit() {
	if !txn.write || txn.rootTxn == nil {
		return
	}
	root := txn.rootTxn
	txn.db.root.Store(&root)
	txn.rootTxn = nil
	txn.db.writer.Unlock()
	for i := len(txn.after); i > 0; i-- {
		txn.after[i-1]()
	}
}

type Service struct {
	ID      string
	Node    string
	Port    int
	Tags    []string
	Version uint64
}

type Catalog struct {
	db      *MemDB
	index   uint64
	watches []func(string)
}

func (c *Catalog) EnsureService(node string, svc *Service) error {
	txn := c.db.Txn(true)
	defer txn.Abort()

	n, err := txn.First("nodes", node)
	if err != nil {
		return fmt.Errorf("failed node lookup: %s", err)
	}
	if n == nil {
		return fmt.Errorf("node %q not registered", node)
	}
	if svc.Port <= 0 || svc.Port > 65535 {
		return fmt.Errorf("invalid port %d for service %s", svc.Port, svc.ID)
	}
	c.index++
	svc.Node, svc.Version = node, c.index
	if err := txn.Insert("services", node+"/"+svc.ID, svc); err != nil {
		return err
	}
	txn.Defer(func() {
		for _, w := range c.watches {
			w(svc.ID)
		}
	})
	txn.Commit()
	return nil
}

func (c *Catalog) EnsureNode(name string) error {
	txn := c.db.Txn(true)
	defer txn.Abort()
	if err := txn.Insert("nodes", name, name); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

func TestProbe(t *testing.T) {
	cat := &Catalog{db: NewMemDB("nodes", "services")}
	cat.watches = append(cat.watches, func(id string) { t.Logf("service %s updated", id) })
	if err := cat.EnsureNode("node-1"); err != nil {
		t.Fatal(err)
	}
	if err := cat.EnsureService("node-2", &Service{ID: "web", Port: 80}); err == nil {
		t.Fatal("expected error registering on unknown node")
	}
	if err := cat.EnsureNode("node-2"); err != nil {
		t.Fatal(err)
	}
	if err := cat.EnsureService("node-2", &Service{ID: "web", Port: 80}); err != nil {
		t.Fatal(err)
	}
}
