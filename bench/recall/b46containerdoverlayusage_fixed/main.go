// Project: containerd/containerd v1.0.0-beta.2 (November 2017; fixed in
// beta.3), with the vendored github.com/boltdb/bolt.
// Files/functions: snapshot/overlay/overlay.go (snapshotter.Usage,
// snapshotter.Commit, snapshotter.Stat), snapshot/storage/metastore.go
// (MetaStore.TransactionContext), snapshot/storage/bolt.go (GetInfo,
// CommitActive), bolt db.go/tx.go (DB.Begin, beginTx, beginRWTx, Tx.Commit,
// Tx.Rollback, DB.allocate, DB.mmap).
// Issue containerd/containerd#1724 "Another deadlock during unpacking image.";
// fixed by containerd/containerd#1730 "Fix deadlock in overlay snapshotter".
//
// overlay's Usage opens a read-only metadata transaction with
// ms.TransactionContext(ctx, false) and calls storage.GetInfo. When GetInfo
// fails (for example "not found" for a snapshot removed meanwhile) Usage
// returns the error before reaching t.Rollback(), so the bolt read
// transaction is never closed and keeps db.mmaplock read-locked. The next
// Commit that grows the database calls db.mmap, which needs
// mmaplock.Lock() and blocks forever behind the leaked reader; from then on
// every new transaction blocks in beginTx on mmaplock.RLock() behind that
// writer, and image unpacking, Stat and Walk all hang. The fix calls
// t.Rollback() right after GetInfo, before checking its error.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ---- github.com/boltdb/bolt ----

type DB struct {
	rwlock   sync.Mutex   // Allows only one writer at a time.
	metalock sync.Mutex   // Protects meta page access.
	mmaplock sync.RWMutex // Protects mmap access during remapping.

	datasz  int
	used    int
	buckets map[string]map[string]string
}

type Tx struct {
	db       *DB
	writable bool
	pending  map[string]string
}

func (db *DB) Begin(writable bool) (*Tx, error) {
	if writable {
		return db.beginRWTx()
	}
	return db.beginTx()
}

func (db *DB) beginTx() (*Tx, error) {
	db.metalock.Lock()
	db.mmaplock.RLock()
	t := &Tx{db: db}
	db.metalock.Unlock()
	return t, nil
}

func (db *DB) beginRWTx() (*Tx, error) {
	db.rwlock.Lock()
	db.metalock.Lock()
	defer db.metalock.Unlock()
	return &Tx{db: db, writable: true, pending: map[string]string{}}, nil
}

func (tx *Tx) Rollback() error {
	if tx.writable {
		tx.db.rwlock.Unlock()
	} else {
		tx.db.mmaplock.RUnlock()
	}
	tx.db = nil
	return nil
}

func (tx *Tx) Commit() error {
	if err := tx.db.allocate(len(tx.pending)); err != nil {
		return err
	}
	for k, v := range tx.pending {
		tx.db.buckets["snapshots"][k] = v
	}
	tx.db.rwlock.Unlock()
	tx.db = nil
	return nil
}

func (db *DB) allocate(count int) error {
	db.used += count
	if db.used >= db.datasz {
		return db.mmap(db.datasz * 2)
	}
	return nil
}

// mmap opens the underlying memory-mapped file and initializes the meta references.
func (db *DB) mmap(minsz int) error {
	db.mmaplock.Lock()
	defer db.mmaplock.Unlock()
	db.datasz = minsz
	return nil
}

// ---- snapshot/storage ----

var ErrNotFound = errors.New("not found")

type transactionKey struct{}

type MetaStore struct{ db *DB }

func (ms *MetaStore) TransactionContext(ctx context.Context, writable bool) (context.Context, *Tx, error) {
	tx, err := ms.db.Begin(writable)
	if err != nil {
		return ctx, nil, err
	}
	return context.WithValue(ctx, transactionKey{}, tx), tx, nil
}

func GetInfo(ctx context.Context, key string) (string, string, int64, error) {
	tx := ctx.Value(transactionKey{}).(*Tx)
	id, ok := tx.db.buckets["snapshots"][key]
	if !ok {
		return "", "", 0, fmt.Errorf("snapshot %v: %w", key, ErrNotFound)
	}
	return id, "active", 0, nil
}

func CommitActive(ctx context.Context, key, name string) (string, error) {
	tx := ctx.Value(transactionKey{}).(*Tx)
	tx.pending[name] = key
	tx.pending[name+"/parent"] = key
	return name, nil
}

// ---- snapshot/overlay ----

type snapshotter struct{ ms *MetaStore }

func (o *snapshotter) Usage(ctx context.Context, key string) (int64, error) {
	ctx, t, err := o.ms.TransactionContext(ctx, false)
	if err != nil {
		return 0, err
	}
	_, _, usage, err := GetInfo(ctx, key)
	t.Rollback() // transaction no longer needed at this point.

	if err != nil {
		return 0, err
	}
	return usage, nil
}

func (o *snapshotter) Commit(ctx context.Context, name, key string) error {
	ctx, t, err := o.ms.TransactionContext(ctx, true)
	if err != nil {
		return err
	}
	CommitActive(ctx, key, name)
	return t.Commit()
}

func (o *snapshotter) Stat(ctx context.Context, key string) (string, error) {
	ctx, t, err := o.ms.TransactionContext(ctx, false)
	if err != nil {
		return "", err
	}
	defer t.Rollback()
	_, kind, _, err := GetInfo(ctx, key)
	return kind, err
}

func main() {
	db := &DB{datasz: 4, used: 3, buckets: map[string]map[string]string{"snapshots": {"extract-1": "1"}}}
	o := &snapshotter{ms: &MetaStore{db: db}}
	ctx := context.Background()

	// CRI asks for the usage of a snapshot that was just removed.
	if _, err := o.Usage(ctx, "extract-gone"); err != nil {
		fmt.Println("usage:", err)
	}

	// The unpacker commits the layer it just extracted.
	go func() {
		err := o.Commit(ctx, "sha256:7f1c", "extract-1")
		fmt.Println("commit:", err)
	}()
	time.Sleep(50 * time.Millisecond)

	kind, err := o.Stat(ctx, "sha256:7f1c")
	fmt.Println("stat:", kind, err)
}
