// Fixed twin (the read lock is released before the duplicate-key return, as in tikv/client-go#1820).
// Project: tikv/client-go v2 (late 2025, as used by TiDB nightly).
// Files: txnkv/transaction/txn.go (KVTxn.LockKeys, KVTxn.lockKeys, KVTxn.Set),
// txnkv/transaction/2pc.go (twoPhaseCommitter.extractKeyExistsErr), internal/unionstore
// (KVUnionStore.GetMemBuffer, the MemDB whose embedded RWMutex readers take with RLock and whose
// set/UpdateFlags take with Lock).
// PR: tikv/client-go#1820 "txnkv: fix the issue that lockKeys doesn't release the internal rlock"
// (ref tikv/tikv#19087).
//
// lockKeys first walks the requested keys under memBuf.RLock() ("avoid data race with concurrent
// updates to the memBuf") to skip keys the pessimistic transaction has already locked. When a key is
// already locked, its locked value exists and the statement asked for an existence check (an INSERT
// of a row the transaction already locked with SELECT ... FOR UPDATE), lockKeys returns the
// duplicate-key error from inside that loop, through twoPhaseCommitter.extractKeyExistsErr, without
// releasing the memdb read lock. The statement fails as expected, but the session keeps the
// transaction, and the next write into the memdb (the statement rollback, or the next INSERT/UPDATE
// through KVTxn.Set) blocks forever in MemDB.set's Lock. The fix releases the read lock before
// returning the error.
package main

import (
	"context"
	"fmt"
	"sync"
)

type KeyFlags uint16

const (
	flagPresumeKNE KeyFlags = 1 << iota
	flagKeyLocked
	flagKeyLockedValExist
	flagNeedCheckExists
)

func (f KeyFlags) HasLocked() bool            { return f&flagKeyLocked != 0 }
func (f KeyFlags) HasLockedValueExists() bool { return f&flagKeyLockedValExist != 0 }
func (f KeyFlags) HasNeedCheckExists() bool   { return f&flagNeedCheckExists != 0 }
func (f KeyFlags) HasPresumeKeyNotExists() bool {
	return f&flagPresumeKNE != 0
}

type memdbEntry struct {
	value []byte
	flags KeyFlags
}

// MemDB is the transaction's membuffer. Readers that must not race with writes
// hold its RLock; every write goes through set, which takes the write lock.
type MemDB struct {
	sync.RWMutex
	entries map[string]*memdbEntry
}

func (db *MemDB) GetFlags(key []byte) (KeyFlags, error) {
	if e, ok := db.entries[string(key)]; ok {
		return e.flags, nil
	}
	return 0, fmt.Errorf("not exist")
}

func (db *MemDB) Set(key, value []byte) error { return db.set(key, value, 0) }

func (db *MemDB) SetWithFlags(key, value []byte, flags KeyFlags) error {
	return db.set(key, value, flags)
}

func (db *MemDB) UpdateFlags(key []byte, set, del KeyFlags) {
	_ = db.set(key, nil, set)
	db.entries[string(key)].flags &^= del
}

func (db *MemDB) set(key, value []byte, flags KeyFlags) error {
	db.Lock()
	defer db.Unlock()
	e, ok := db.entries[string(key)]
	if !ok {
		e = &memdbEntry{}
		db.entries[string(key)] = e
	}
	if value != nil {
		e.value = value
	}
	e.flags |= flags
	return nil
}

type KVUnionStore struct{ memBuffer *MemDB }

func (us *KVUnionStore) GetMemBuffer() *MemDB { return us.memBuffer }

type ErrKeyExist struct{ Key []byte }

type twoPhaseCommitter struct{ txn *KVTxn }

func (c *twoPhaseCommitter) extractKeyExistsErr(err *ErrKeyExist) error {
	flags, _ := c.txn.us.GetMemBuffer().GetFlags(err.Key)
	if !flags.HasPresumeKeyNotExists() {
		return fmt.Errorf("existErr for key %q should not be nil", err.Key)
	}
	return fmt.Errorf("[kv:1062]Duplicate entry '%s' for key 't.PRIMARY'", err.Key)
}

type LockCtx struct{ ForUpdateTS uint64 }

type KVTxn struct {
	us          *KVUnionStore
	mu          sync.Mutex // protects lockKeys against concurrent callers
	committer   *twoPhaseCommitter
	pessimistic bool
	lockedCnt   int
	tikvRows    map[string]bool // what a pessimistic lock request finds in TiKV
}

func (txn *KVTxn) IsPessimistic() bool { return txn.pessimistic }

func (txn *KVTxn) Set(k, v []byte) error { return txn.us.GetMemBuffer().Set(k, v) }

func (txn *KVTxn) LockKeys(ctx context.Context, lockCtx *LockCtx, keysInput ...[]byte) error {
	return txn.lockKeys(ctx, lockCtx, nil, keysInput...)
}

func (txn *KVTxn) lockKeys(ctx context.Context, lockCtx *LockCtx, fn func(), keysInput ...[]byte) error {
	txn.mu.Lock()
	defer txn.mu.Unlock()
	defer func() {
		if fn != nil {
			fn()
		}
	}()
	keys := make([][]byte, 0, len(keysInput))
	memBuf := txn.us.GetMemBuffer()
	// Avoid data race with concurrent updates to the memBuf
	memBuf.RLock()
	for _, key := range keysInput {
		var valueExist, locked, checkKeyExists bool
		if flags, err := memBuf.GetFlags(key); err == nil {
			locked = flags.HasLocked()
			valueExist = flags.HasLockedValueExists()
			checkKeyExists = flags.HasNeedCheckExists()
		}
		if !locked {
			keys = append(keys, key)
		}
		if locked && txn.IsPessimistic() {
			if checkKeyExists && valueExist {
				e := &ErrKeyExist{Key: key}
				memBuf.RUnlock()
				return txn.committer.extractKeyExistsErr(e)
			}
		}
	}
	memBuf.RUnlock()

	// pessimisticLockMutations: acquire the locks in TiKV, then record them.
	for _, key := range keys {
		set := flagKeyLocked
		if txn.tikvRows[string(key)] {
			set |= flagKeyLockedValExist
		}
		memBuf.UpdateFlags(key, set, flagNeedCheckExists)
	}
	txn.lockedCnt += len(keys)
	return nil
}

func main() {
	ctx := context.Background()
	txn := &KVTxn{us: &KVUnionStore{memBuffer: &MemDB{entries: map[string]*memdbEntry{}}},
		pessimistic: true, tikvRows: map[string]bool{"t_r_1": true}}
	txn.committer = &twoPhaseCommitter{txn: txn}
	lockCtx := &LockCtx{ForUpdateTS: 100}

	// BEGIN PESSIMISTIC; SELECT * FROM t WHERE id = 1 FOR UPDATE;
	fmt.Println("select for update:", txn.LockKeys(ctx, lockCtx, []byte("t_r_1")))

	// INSERT INTO t VALUES (1, ...): the row is presumed absent and must be checked.
	_ = txn.us.GetMemBuffer().SetWithFlags([]byte("t_r_1"), []byte("v1"), flagPresumeKNE|flagNeedCheckExists)
	fmt.Println("insert id=1:", txn.LockKeys(ctx, lockCtx, []byte("t_r_1")))

	// INSERT INTO t VALUES (2, ...) in the same transaction.
	fmt.Println("insert id=2:", txn.Set([]byte("t_r_2"), []byte("v2")))
}
