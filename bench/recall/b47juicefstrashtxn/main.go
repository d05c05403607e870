// juicedata/juicefs 1.3 dev line, pkg/meta/redis.go (redisMeta.txn, doRename,
// doMknod, doLookup), pkg/meta/base.go (baseMeta.txLock, checkTrash, Rename).
// Fixed by PR #6558 "meta/redis: fix potential deadlock".
//
// Every Redis metadata transaction first takes one of 1024 process-local
// txlocks, chosen by FNV-32 of the transaction's first key. doRename's
// transaction is keyed by the source directory's inode key. When the rename
// replaces an existing file and the trash is enabled, the transaction closure
// calls checkTrash for the hourly trash sub-directory; the first time in an
// hour it does not exist, so checkTrash creates it with doMknod, a second
// transaction keyed by the trash root's inode key. When both keys fall on the
// same stripe, the nested txn locks a sync.Mutex its own goroutine holds, and
// the FUSE request and every later metadata operation on that stripe hang.
// The fix calls checkTrash before the transaction is entered.
package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"syscall"
	"time"
)

type Ino uint64

func (i Ino) String() string { return strconv.FormatUint(uint64(i), 10) }
func (i Ino) IsTrash() bool  { return i >= TrashInode }

const (
	nlocks             = 1024
	TrashInode     Ino = 0x7FFFFFFF10000000
	TypeFile           = 1
	TypeDirectory      = 2
	RenameExchange     = 1 << 1
)

type engine interface {
	doLookup(parent Ino, name string, inode *Ino) syscall.Errno
	doMknod(parent Ino, name string, typ uint8, inode *Ino) syscall.Errno
	doRename(parentSrc Ino, nameSrc string, parentDst Ino, nameDst string, flags uint32) syscall.Errno
}

type baseMeta struct {
	sync.Mutex
	en           engine
	fmt          struct{ TrashDays int }
	txlocks      [nlocks]sync.Mutex // Pessimistic locks to reduce conflict
	subTrashIno  Ino                // cached hourly trash sub-directory
	subTrashName string
}

func (m *baseMeta) txLock(idx uint)   { m.txlocks[idx%nlocks].Lock() }
func (m *baseMeta) txUnlock(idx uint) { m.txlocks[idx%nlocks].Unlock() }

func (m *baseMeta) toTrash(parent Ino) bool { return !parent.IsTrash() && m.fmt.TrashDays > 0 }

func (m *baseMeta) checkTrash(parent Ino, trash *Ino) syscall.Errno {
	if !m.toTrash(parent) {
		return 0
	}
	name := time.Now().UTC().Format("2006-01-02-15")
	m.Lock()
	defer m.Unlock()
	if name == m.subTrashName {
		*trash = m.subTrashIno
		return 0
	}
	m.Unlock()
	st := m.en.doLookup(TrashInode, name, trash)
	if st == syscall.ENOENT {
		st = m.en.doMknod(TrashInode, name, TypeDirectory, trash)
	}
	m.Lock()
	if st != 0 && st != syscall.EEXIST {
		return st
	}
	m.subTrashIno, m.subTrashName = *trash, name
	return 0
}

func (m *baseMeta) Rename(parentSrc Ino, nameSrc string, parentDst Ino, nameDst string, flags uint32) syscall.Errno {
	return m.en.doRename(parentSrc, nameSrc, parentDst, nameDst, flags)
}

type redisStore struct { // stands in for the Redis server
	hashes    map[string]map[string]string
	nextInode Ino
}
type Tx struct{ s *redisStore }

func (tx *Tx) HGet(key, field string) (string, error) {
	if v, ok := tx.s.hashes[key][field]; ok {
		return v, nil
	}
	return "", errors.New("redis: nil")
}

func (tx *Tx) HSet(key, field, value string) {
	if tx.s.hashes[key] == nil {
		tx.s.hashes[key] = map[string]string{}
	}
	tx.s.hashes[key][field] = value
}

func (tx *Tx) HDel(key, field string) { delete(tx.s.hashes[key], field) }

type redisMeta struct {
	*baseMeta
	prefix string
	rdb    *redisStore
}

func toErrno(err error) syscall.Errno {
	errno, _ := err.(syscall.Errno)
	return errno
}

func (m *redisMeta) inodeKey(inode Ino) string  { return m.prefix + "i" + inode.String() }
func (m *redisMeta) entryKey(parent Ino) string { return m.prefix + "d" + parent.String() }

func (m *redisMeta) txn(txf func(tx *Tx) error, keys ...string) error {
	var khash = fnv.New32()
	_, _ = khash.Write([]byte(keys[0]))
	h := uint(khash.Sum32())
	m.txLock(h)
	defer m.txUnlock(h)
	return txf(&Tx{m.rdb}) // WATCH keys ... MULTI/EXEC, retried on conflict
}

func (m *redisMeta) doLookup(parent Ino, name string, inode *Ino) syscall.Errno {
	v, err := (&Tx{m.rdb}).HGet(m.entryKey(parent), name)
	if err != nil {
		return syscall.ENOENT
	}
	n, _ := strconv.ParseUint(v[1:], 10, 64)
	*inode = Ino(n)
	return 0
}

func (m *redisMeta) doMknod(parent Ino, name string, typ uint8, inode *Ino) syscall.Errno {
	err := m.txn(func(tx *Tx) error {
		if _, err := tx.HGet(m.entryKey(parent), name); err == nil {
			return syscall.EEXIST
		}
		m.rdb.nextInode++ // INCR nextInode
		*inode = m.rdb.nextInode
		tx.HSet(m.entryKey(parent), name, fmt.Sprintf("%d%d", typ, *inode))
		return nil
	}, m.inodeKey(parent), m.entryKey(parent))
	return toErrno(err)
}

func (m *redisMeta) doRename(parentSrc Ino, nameSrc string, parentDst Ino, nameDst string, flags uint32) syscall.Errno {
	exchange := flags == RenameExchange
	var trash Ino
	keys := []string{m.inodeKey(parentSrc), m.entryKey(parentSrc), m.inodeKey(parentDst), m.entryKey(parentDst)}
	if parentSrc.IsTrash() {
		keys[0], keys[2] = keys[2], keys[0] // lock the parentDst
	}
	err := m.txn(func(tx *Tx) error {
		buf, err := tx.HGet(m.entryKey(parentSrc), nameSrc)
		if err != nil {
			return syscall.ENOENT
		}
		dbuf, err := tx.HGet(m.entryKey(parentDst), nameDst)
		if err == nil && !exchange {
			if st := m.checkTrash(parentDst, &trash); st != 0 {
				return st
			}
		}
		tx.HDel(m.entryKey(parentSrc), nameSrc)
		if dbuf != "" && trash > 0 {
			tx.HSet(m.entryKey(trash), fmt.Sprintf("%d-%s-%s", parentDst, dbuf[1:], nameDst), dbuf)
		}
		tx.HSet(m.entryKey(parentDst), nameDst, buf)
		return nil
	}, keys...)
	return toErrno(err)
}

func main() {
	m := &redisMeta{baseMeta: &baseMeta{}, prefix: "jfs1", rdb: &redisStore{hashes: map[string]map[string]string{}}}
	m.fmt.TrashDays, m.en = 1, m
	// A project directory whose inode key shares a txlock stripe with the
	// trash root's key (one directory in ~1024 does).
	stripe := func(k string) uint32 { h := fnv.New32(); h.Write([]byte(k)); return h.Sum32() % nlocks }
	var dir Ino
	for dir = 2; stripe(m.inodeKey(dir)) != stripe(m.inodeKey(TrashInode)); dir++ {
	}
	m.rdb.nextInode = dir + 10
	tx := &Tx{m.rdb}
	tx.HSet(m.entryKey(dir), "main.go", fmt.Sprintf("%d%d", TypeFile, dir+1))
	tx.HSet(m.entryKey(dir), ".main.go.swp", fmt.Sprintf("%d%d", TypeFile, dir+2))
	// An editor saves main.go atomically: rename the temp file over it.
	st := m.Rename(dir, ".main.go.swp", dir, "main.go", 0)
	fmt.Printf("rename in dir %d: errno %d, subTrash %q\n", dir, st, m.subTrashName)
}
