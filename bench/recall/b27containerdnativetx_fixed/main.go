// Project: containerd/containerd (snapshots/native/native.go, snapshots/storage, bbolt)
// PR:      containerd/containerd#6722 "native: fix deadlock from leaving transactions
// open" (backported to release/1.5 and 1.6 as #6726/#6727).
//
// Bug: the native snapshotter keeps its metadata in bbolt through
// storage.MetaStore.TransactionContext, which opens a bolt transaction and stores
// it in the context for the storage.* helpers. A writable bolt transaction holds
// the DB's single-writer lock (DB.rwlock, a sync.Mutex) until Commit or
// Rollback. snapshotter.Commit returned early when storage.GetInfo (unknown
// key) or fs.DiskUsage failed, without rolling the write transaction back. The
// writer lock is leaked, and the next Prepare/View/Commit/Remove on the
// snapshotter blocks forever in db.Begin(true): image pulls and container
// creation using the native snapshotter hang. The fix rolls back on every error.
//
// Deadlocking acquisition: db.rwlock.Lock() in DB.Begin (line 55), after the
// lock leaked by the early return at line 117 (GetInfo error in Commit).
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

type DB struct { // go.etcd.io/bbolt, reduced
	rwlock  sync.Mutex // allows only one writer at a time
	buckets map[string]map[string]string
}

type Tx struct {
	db       *DB
	writable bool
	pending  map[string]string
}

func (tx *Tx) close() {
	if tx.db != nil && tx.writable {
		tx.db.rwlock.Unlock()
	}
	tx.db = nil
}

func (tx *Tx) Rollback() error { tx.close(); return nil }
func (tx *Tx) Commit() error {
	for k, v := range tx.pending {
		tx.db.buckets["snapshots"][k] = v
	}
	tx.close()
	return nil
}

func (db *DB) Begin(writable bool) (*Tx, error) {
	if writable {
		db.rwlock.Lock() // the next writer blocks here forever
	}
	return &Tx{db: db, writable: writable, pending: map[string]string{}}, nil
}

type Transactor interface {
	Commit() error
	Rollback() error
}

type transactionKey struct{}

type MetaStore struct{ db *DB }

func (ms *MetaStore) TransactionContext(ctx context.Context, writable bool) (context.Context, Transactor, error) {
	tx, err := ms.db.Begin(writable)
	return context.WithValue(ctx, transactionKey{}, tx), tx, err
}

func txFromContext(ctx context.Context) *Tx { return ctx.Value(transactionKey{}).(*Tx) }

var ErrNotFound = errors.New("not found")

func GetInfo(ctx context.Context, key string) (string, error) {
	tx := txFromContext(ctx)
	if id, ok := tx.pending[key]; ok {
		return id, nil
	}
	if id, ok := tx.db.buckets["snapshots"][key]; ok {
		return id, nil
	}
	return "", fmt.Errorf("snapshot %v does not exist: %w", key, ErrNotFound)
}

func CreateSnapshot(ctx context.Context, key, parent string) (string, error) {
	tx := txFromContext(ctx)
	id := fmt.Sprintf("%d", len(tx.db.buckets["snapshots"])+1)
	tx.pending[key] = id
	return id, nil
}

func CommitActive(ctx context.Context, key, name string) error {
	tx := txFromContext(ctx)
	tx.pending[name] = tx.db.buckets["snapshots"][key]
	return nil
}

type snapshotter struct {
	root string
	ms   *MetaStore
}

func diskUsage(dir string) (int64, error) { return 4096, nil } // fs.DiskUsage

func (o *snapshotter) Commit(ctx context.Context, name, key string) (err error) {
	ctx, t, err := o.ms.TransactionContext(ctx, true)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			if rerr := t.Rollback(); rerr != nil {
				fmt.Println("failed to rollback transaction:", rerr)
			}
		}
	}()

	id, err := GetInfo(ctx, key)
	if err != nil {
		return err
	}
	if _, err := diskUsage(o.root + "/snapshots/" + id); err != nil {
		return err
	}
	if err := CommitActive(ctx, key, name); err != nil {
		return fmt.Errorf("failed to commit snapshot: %w", err)
	}
	return t.Commit()
}

func (o *snapshotter) Prepare(ctx context.Context, key, parent string) (string, error) {
	ctx, t, err := o.ms.TransactionContext(ctx, true)
	if err != nil {
		return "", err
	}
	id, err := CreateSnapshot(ctx, key, parent)
	if err != nil {
		_ = t.Rollback()
		return "", fmt.Errorf("failed to create snapshot: %w", err)
	}
	return o.root + "/snapshots/" + id, t.Commit()
}

func main() {
	o := &snapshotter{root: "/var/lib/containerd/io.containerd.snapshotter.v1.native",
		ms: &MetaStore{db: &DB{buckets: map[string]map[string]string{"snapshots": {}}}}}
	ctx := context.Background()

	dir, err := o.Prepare(ctx, "extract-1 sha256:aaa", "")
	fmt.Println("prepare:", dir, err)
	// A racing unpack already removed the active snapshot: Commit fails.
	fmt.Println("commit:", o.Commit(ctx, "sha256:aaa", "extract-1 sha256:gone"))

	dir, err = o.Prepare(ctx, "extract-2 sha256:bbb", "sha256:aaa")
	fmt.Println("prepare:", dir, err)
}
