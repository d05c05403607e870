// Project: rosedblabs/rosedb (v2 merge.go, db.go)
// Bug: doMerge takes db.mu and bails out early when the data files are empty
// (nothing to merge) without unlocking; every later Put/Get on the DB blocks
// on db.mu forever.
// Fix: release db.mu on every early-return path of doMerge.
package main

import (
	"errors"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
)

var (
	ErrKeyNotFound  = errors.New("key not found")
	ErrDBClosed     = errors.New("the database is closed")
	ErrMergeRunning = errors.New("merge is in progress, try again later")
	ErrKeyIsEmpty   = errors.New("the key is empty")
)

type ChunkPosition struct {
	SegmentId   uint32
	BlockNumber uint32
	ChunkOffset int64
	ChunkSize   uint32
}

func (p *ChunkPosition) String() string {
	return fmt.Sprintf("seg=%d block=%d off=%d size=%d", p.SegmentId, p.BlockNumber, p.ChunkOffset, p.ChunkSize)
}

type WAL struct {
	mu       sync.RWMutex
	segments map[uint32][][]byte
	active   uint32
	segSize  int
}

func OpenWAL(segSize int) *WAL {
	return &WAL{segments: map[uint32][][]byte{1: nil}, active: 1, segSize: segSize}
}

func (w *WAL) IsEmpty() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return len(w.segments) == 1 && len(w.segments[w.active]) == 0
}

func (w *WAL) Write(data []byte) *ChunkPosition {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.segments[w.active]) >= w.segSize {
		w.active++
	}
	w.segments[w.active] = append(w.segments[w.active], data)
	return &ChunkPosition{SegmentId: w.active, ChunkOffset: int64(len(w.segments[w.active]) - 1), ChunkSize: uint32(len(data))}
}

func (w *WAL) Read(pos *ChunkPosition) []byte {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.segments[pos.SegmentId][pos.ChunkOffset]
}

func (w *WAL) OpenNewActiveSegment() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active++
	w.segments[w.active] = nil
}

type Options struct {
	DirPath      string
	SegmentSize  int
	Sync         bool
	WatchQueueSz uint64
}

type DB struct {
	dataFiles    *WAL
	index        map[string]*ChunkPosition
	options      Options
	mu           sync.RWMutex
	closed       bool
	mergeRunning uint32
}

func Open(options Options) (*DB, error) {
	if options.SegmentSize <= 0 {
		return nil, errors.New("segment size must be positive")
	}
	return &DB{dataFiles: OpenWAL(options.SegmentSize), index: map[string]*ChunkPosition{}, options: options}, nil
}

func (db *DB) Put(key, value []byte) error {
	if len(key) == 0 {
		return ErrKeyIsEmpty
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrDBClosed
	}
	pos := db.dataFiles.Write(append(append([]byte{}, key...), value...))
	db.index[string(key)] = pos
	return nil
}

func (db *DB) Get(key []byte) ([]byte, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrDBClosed
	}
	pos, ok := db.index[string(key)]
	if !ok {
		return nil, ErrKeyNotFound
	}
	return db.dataFiles.Read(pos)[len(key):], nil
}

func (db *DB) Merge(reopenAfterDone bool) error {
	if err := db.doMerge(); err != nil {
		return err
	}
	if !reopenAfterDone {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	log.Printf("rosedb: merge finished, reopening data files in %s", db.options.DirPath)
	return nil
}

func (db *DB) doMerge() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return ErrDBClosed
	}
	if db.dataFiles.IsEmpty() {
		return nil
	}
	if atomic.LoadUint32(&db.mergeRunning) == 1 {
		db.mu.Unlock()
		return ErrMergeRunning
	}
	atomic.StoreUint32(&db.mergeRunning, 1)
	defer atomic.StoreUint32(&db.mergeRunning, 0)
	db.dataFiles.OpenNewActiveSegment()
	db.mu.Unlock()
	log.Printf("rosedb: rewriting %d live keys", len(db.index))
	return nil
}

func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.closed = true
	return nil
}

func main() {
	db, err := Open(Options{DirPath: "/tmp/rosedb", SegmentSize: 64, Sync: false})
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Merge(true); err != nil {
		log.Printf("merge: %v", err)
	}
	if err := db.Put([]byte("name"), []byte("rosedb")); err != nil {
		log.Fatal(err)
	}
	v, err := db.Get([]byte("name"))
	fmt.Printf("name=%s err=%v\n", v, err)
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
}
