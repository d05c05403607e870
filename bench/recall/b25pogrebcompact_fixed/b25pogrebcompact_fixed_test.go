// Project: akrylysov/pogreb
// Bug: background compaction locked the datalog (dl.mu) while copying live records out of a fragmented segment and then took db.mu to rewrite index entries, while Put holds db.mu and then takes dl.mu to append the record: AB-BA between db.mu and datalog.mu.
// Fix: compaction acquires db.mu before the datalog lock (the same order as Put/Get) and updates the index while holding both.
package b25pogrebcompact_fixed

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

var errKeyNotFound = errors.New("pogreb: key not found")

type Options struct {
	BackgroundSyncInterval       time.Duration
	BackgroundCompactionInterval time.Duration
	CompactionMinFragmentation   float32
}

type segment struct {
	id          uint16
	records     map[string][]byte
	deletedKeys int
	readOnly    bool
}

func (s *segment) fragmentation() float32 {
	total := len(s.records) + s.deletedKeys
	if total == 0 {
		return 0
	}
	return float32(s.deletedKeys) / float32(total)
}

type datalog struct {
	mu       sync.Mutex
	segments []*segment
	curSeg   *segment
}

func (dl *datalog) put(key string, value []byte) (uint16, error) {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.curSeg.readOnly {
		return 0, fmt.Errorf("segment %d is read-only", dl.curSeg.id)
	}
	dl.curSeg.records[key] = value
	return dl.curSeg.id, nil
}

type index struct {
	entries map[string]uint16
}

type CompactionResult struct {
	CompactedSegments int
	ReclaimedRecords  int
}

type DB struct {
	mu             sync.RWMutex
	opts           *Options
	index          *index
	datalog        *datalog
	cancelBgWorker chan struct{}
	closeWg        sync.WaitGroup
	compacting     bool
}

func Open(opts *Options) *DB {
	seg0 := &segment{id: 0, records: map[string][]byte{"a": []byte("1"), "b": []byte("2")}, deletedKeys: 6, readOnly: true}
	seg1 := &segment{id: 1, records: map[string][]byte{}}
	db := &DB{
		opts:           opts,
		index:          &index{entries: map[string]uint16{"a": 0, "b": 0}},
		datalog:        &datalog{segments: []*segment{seg0, seg1}, curSeg: seg1},
		cancelBgWorker: make(chan struct{}),
	}
	db.closeWg.Add(1)
	go db.startBackgroundWorker()
	return db
}

func (db *DB) startBackgroundWorker() {
	defer db.closeWg.Done()
	compactTicker := time.NewTicker(db.opts.BackgroundCompactionInterval)
	defer compactTicker.Stop()
	for {
		select {
		case <-db.cancelBgWorker:
			return
		case <-compactTicker.C:
			if _, err := db.Compact(); err != nil {
				return
			}
		}
	}
}

func (db *DB) Put(key string, value []byte) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	segID, err := db.datalog.put(key, value)
	if err != nil {
		return err
	}
	db.index.entries[key] = segID
	return nil
}

func (db *DB) Get(key string) ([]byte, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	segID, ok := db.index.entries[key]
	if !ok {
		return nil, errKeyNotFound
	}
	db.datalog.mu.Lock()
	defer db.datalog.mu.Unlock()
	return db.datalog.segments[segID].records[key], nil
}

func (db *DB) Compact() (CompactionResult, error) {
	cr := CompactionResult{}
	dl := db.datalog
	db.mu.Lock()
	defer db.mu.Unlock()
	dl.mu.Lock()
	defer dl.mu.Unlock()
	for _, seg := range dl.segments {
		if !seg.readOnly || seg.fragmentation() < db.opts.CompactionMinFragmentation {
			continue
		}
		for key, val := range seg.records {
			time.Sleep(10 * time.Millisecond)
			dl.curSeg.records[key] = val
			db.index.entries[key] = dl.curSeg.id

			cr.ReclaimedRecords++
		}
		seg.records = map[string][]byte{}
		seg.deletedKeys = 0
		cr.CompactedSegments++
	}
	return cr, nil
}

func (db *DB) Close() error {
	close(db.cancelBgWorker)
	db.closeWg.Wait()
	return nil
}

func TestProbe(t *testing.T) {
	db := Open(&Options{
		BackgroundSyncInterval:       time.Second,
		BackgroundCompactionInterval: 5 * time.Millisecond,
		CompactionMinFragmentation:   0.5,
	})
	time.Sleep(8 * time.Millisecond)
	for i := 0; i < 3; i++ {
		if err := db.Put(fmt.Sprintf("k%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := db.Get("a"); err != nil || string(v) != "1" {
		t.Fatalf("Get(a) = %q, %v", v, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
