// Project: syndtr/goleveldb
// Bug: acquireSnapshot held db.snapsMu while pinning the current memdbs via getMems (memMu.RLock), while rotateMem held memMu.Lock across the journal rotation and then called db.minSeq (snapsMu) to decide whether the frozen memdb could be released: AB-BA between snapsMu and memMu.
// Fix: acquireSnapshot only touches the snapshot list under snapsMu; the memdbs are pinned after snapsMu is released.
package b25goleveldbsnap_fixed

import (
	"container/list"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var ErrClosed = errors.New("leveldb: closed")

type Options struct {
	WriteBuffer int
	NoSync      bool
}

type memDB struct {
	ref  int32
	kv   map[string][]byte
	size int
}

func (m *memDB) incref() { atomic.AddInt32(&m.ref, 1) }
func (m *memDB) decref() { atomic.AddInt32(&m.ref, -1) }

type snapshotElement struct {
	seq uint64
	ref int
	e   *list.Element
}

type Snapshot struct {
	db   *DB
	elem *snapshotElement
	mems []*memDB
}

type journal struct {
	num  int64
	sync bool
}

func (j *journal) rotate() {
	j.num++
	if j.sync {
		time.Sleep(25 * time.Millisecond)
	}
}

type DB struct {
	seq        uint64
	o          *Options
	memMu      sync.RWMutex
	mem        *memDB
	frozenMem  *memDB
	frozenSeq  uint64
	journal    *journal
	snapsMu    sync.Mutex
	snapsList  *list.List
	writeLockC chan struct{}
	closed     uint32
}

func Open(o *Options) *DB {
	db := &DB{
		o:          o,
		mem:        &memDB{ref: 1, kv: map[string][]byte{}},
		journal:    &journal{sync: !o.NoSync},
		snapsList:  list.New(),
		writeLockC: make(chan struct{}, 1),
	}
	return db
}

func (db *DB) getSeq() uint64 { return atomic.LoadUint64(&db.seq) }

func (db *DB) getMems() (e, f *memDB) {
	db.memMu.RLock()
	defer db.memMu.RUnlock()
	db.mem.incref()
	if db.frozenMem != nil {
		db.frozenMem.incref()
	}
	return db.mem, db.frozenMem
}

func (db *DB) minSeq() uint64 {
	db.snapsMu.Lock()
	defer db.snapsMu.Unlock()
	if e := db.snapsList.Front(); e != nil {
		return e.Value.(*snapshotElement).seq
	}
	return db.getSeq()
}

func (db *DB) rotateMem() {
	db.memMu.Lock()
	defer db.memMu.Unlock()
	db.journal.rotate()
	old := db.frozenMem
	db.frozenMem = db.mem
	db.frozenSeq = db.getSeq()
	db.mem = &memDB{ref: 1, kv: map[string][]byte{}}
	minSeq := db.minSeq()
	if old != nil && db.frozenSeq <= minSeq {
		old.decref()
	}
}

func (db *DB) Put(key, value []byte) error {
	if atomic.LoadUint32(&db.closed) != 0 {
		return ErrClosed
	}
	db.writeLockC <- struct{}{}
	defer func() { <-db.writeLockC }()
	mem, _ := db.getMems()
	full := mem.size+len(key)+len(value) > db.o.WriteBuffer
	mem.decref()
	if full {
		db.rotateMem()
	}
	db.memMu.RLock()
	db.mem.kv[string(key)] = append([]byte(nil), value...)
	db.mem.size += len(key) + len(value)
	db.memMu.RUnlock()
	atomic.AddUint64(&db.seq, 1)
	return nil
}

func (db *DB) acquireSnapshot() *Snapshot {
	db.snapsMu.Lock()
	defer db.snapsMu.Unlock()
	seq := db.getSeq()
	var se *snapshotElement
	if e := db.snapsList.Back(); e != nil && e.Value.(*snapshotElement).seq == seq {
		se = e.Value.(*snapshotElement)
		se.ref++
	} else {
		se = &snapshotElement{seq: seq, ref: 1}
		se.e = db.snapsList.PushBack(se)
	}
	return &Snapshot{db: db, elem: se}
}

func (db *DB) GetSnapshot() (*Snapshot, error) {
	if atomic.LoadUint32(&db.closed) != 0 {
		return nil, ErrClosed
	}
	snap := db.acquireSnapshot()
	mem, fmem := db.getMems()
	snap.mems = append(snap.mems, mem)
	if fmem != nil {
		snap.mems = append(snap.mems, fmem)
	}
	return snap, nil

}

func (snap *Snapshot) Release() {
	snap.db.snapsMu.Lock()
	snap.elem.ref--
	if snap.elem.ref == 0 {
		snap.db.snapsList.Remove(snap.elem.e)
	}
	snap.db.snapsMu.Unlock()
	for _, m := range snap.mems {
		m.decref()
	}
}

func TestProbe(t *testing.T) {
	db := Open(&Options{WriteBuffer: 16})
	if err := db.Put([]byte("k0"), []byte("v0")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- db.Put([]byte("k1"), []byte("a-value-that-overflows-the-buffer")) }()
	time.Sleep(5 * time.Millisecond)
	snap, err := db.GetSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
