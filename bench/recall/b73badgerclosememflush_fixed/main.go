// Project: dgraph-io/badger (db.go: DB.Close, DB.flushMemtable, DB.ensureRoomForWrite), 2017, v0.8/v0.9 era (approximate).
// Bug: DB.Close held the embedded DB write lock while doing a blocking send of the last memtable on db.flushChan; when the channel was full the flusher could only take the next task after finishing its current one, and it needs db.Lock to pop the flushed memtable from db.imm, so Close and the flusher deadlock. The fix pushes with a non-blocking select and unlocks and sleeps before retrying.
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Skiplist stands in for skl.Skiplist, the in-memory table.
type Skiplist struct {
	ref  int32
	m    map[string][]byte
	size int64
}

func NewSkiplist() *Skiplist { return &Skiplist{ref: 1, m: map[string][]byte{}} }

func (s *Skiplist) Put(key []byte, v []byte) {
	s.m[string(key)] = v
	s.size += int64(len(key) + len(v))
}
func (s *Skiplist) MemSize() int64 { return s.size }
func (s *Skiplist) Empty() bool    { return len(s.m) == 0 }
func (s *Skiplist) IncrRef()       { atomic.AddInt32(&s.ref, 1) }
func (s *Skiplist) DecrRef()       { atomic.AddInt32(&s.ref, -1) }

// Closer mirrors y.Closer.
type Closer struct {
	closed  chan struct{}
	waiting sync.WaitGroup
}

func NewCloser(initial int) *Closer {
	c := &Closer{closed: make(chan struct{})}
	c.waiting.Add(initial)
	return c
}
func (c *Closer) Done() { c.waiting.Done() }
func (c *Closer) Wait() { c.waiting.Wait() }

func AssertTrue(b bool) {
	if !b {
		panic("assert failed")
	}
}

type valuePointer struct{ Fid, Len, Offset uint32 }

type flushTask struct {
	mt   *Skiplist
	vptr valuePointer
}

type levelsController struct {
	mu sync.Mutex
	l0 []int
}

func (s *levelsController) addLevel0Table(n int) {
	s.mu.Lock()
	s.l0 = append(s.l0, n)
	s.mu.Unlock()
}

type Options struct {
	MaxTableSize int64
	NumMemtables int
}

var errNoRoom = errors.New("No room for write")

type DB struct {
	sync.RWMutex // Guards list of inmemory tables, not individual reads and writes.

	closers   struct{ memtable *Closer }
	mt        *Skiplist   // Our latest (actively written) in-memory table
	imm       []*Skiplist // Add here only AFTER pushing to flushChan.
	opt       Options
	lc        *levelsController
	vhead     valuePointer
	flushChan chan flushTask
}

func Open(opt Options) *DB {
	db := &DB{
		imm:       make([]*Skiplist, 0, opt.NumMemtables),
		flushChan: make(chan flushTask, opt.NumMemtables),
		opt:       opt,
		lc:        &levelsController{},
		mt:        NewSkiplist(),
	}
	db.closers.memtable = NewCloser(1)
	go db.flushMemtable(db.closers.memtable)
	return db
}

// ensureRoomForWrite is always called serially.
func (db *DB) ensureRoomForWrite() error {
	db.Lock()
	defer db.Unlock()
	if db.mt.MemSize() < db.opt.MaxTableSize {
		return nil
	}
	AssertTrue(db.mt != nil) // A nil mt indicates that DB is being closed.
	select {
	case db.flushChan <- flushTask{db.mt, db.vhead}:
		db.imm = append(db.imm, db.mt)
		db.mt = NewSkiplist()
		return nil
	default:
		// We need to do this to unlock and allow the flusher to modify imm.
		return errNoRoom
	}
}

func (db *DB) writeToLSM(key, value []byte) {
	var err error
	for err = db.ensureRoomForWrite(); err == errNoRoom; err = db.ensureRoomForWrite() {
		time.Sleep(10 * time.Millisecond)
	}
	db.mt.Put(key, value)
	db.vhead.Offset += uint32(len(key) + len(value))
}

func (db *DB) handleFlushTask(ft flushTask) error {
	time.Sleep(50 * time.Millisecond) // build and sync the level-0 SSTable
	db.lc.addLevel0Table(len(ft.mt.m))
	return nil
}

func (db *DB) flushMemtable(lc *Closer) error {
	defer lc.Done()
	for ft := range db.flushChan {
		if ft.mt == nil {
			return nil
		}
		if err := db.handleFlushTask(ft); err != nil {
			return err
		}
		// Update s.imm. Need a lock.
		db.Lock()
		AssertTrue(ft.mt == db.imm[0])
		db.imm = db.imm[1:]
		ft.mt.DecrRef() // Return memory.
		db.Unlock()
	}
	return nil
}

func (db *DB) Close() error {
	// Make sure that block writer is done pushing stuff into memtable!
	if !db.mt.Empty() {
		for {
			pushedFlushTask := func() bool {
				db.Lock()
				defer db.Unlock()
				AssertTrue(db.mt != nil)
				select {
				case db.flushChan <- flushTask{db.mt, db.vhead}:
					db.imm = append(db.imm, db.mt) // Flusher will attempt to remove this from s.imm.
					db.mt = nil                    // Will segfault if we try writing!
					return true
				default:
					// If we fail to push, we need to unlock and wait for a short while.
					// The flushing operation needs to update s.imm. Otherwise, we have a deadlock.
				}
				return false
			}()
			if pushedFlushTask {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	db.flushChan <- flushTask{nil, valuePointer{}} // Tell flusher to quit.
	db.closers.memtable.Wait()
	return nil
}

func main() {
	db := Open(Options{MaxTableSize: 64, NumMemtables: 1})
	for i := 0; i < 20; i++ {
		db.writeToLSM([]byte(fmt.Sprintf("key%03d", i)), []byte("value-0"))
	}
	if err := db.Close(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("closed, level 0 tables:", db.lc.l0)
}
