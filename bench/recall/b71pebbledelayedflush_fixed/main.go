// Pebble (cockroachdb/pebble, CockroachDB's storage engine), issue #2597, fixed
// by PR #2610 "db: Call maybeScheduleFlush before waiting on cond lock" (2023).
//
// Ingestion's prepare step runs under the commit mutex (d.commit.mu) and then
// takes d.mu. Since #2486 an ingestion pins the mutable memtable with a writer
// reference while rotating it, so the maybeScheduleFlush call made then finds
// nothing ready, and nobody calls it again when the reference is dropped. When
// the next ingestion must rotate and the queue is at MemTableStopWritesThreshold,
// makeRoomForWrite stalls in d.mu.compact.cond.Wait, still holding the commit
// mutex, for a flush never scheduled. The delayed flush armed for a memtable
// with range deletions locks d.commit.mu first, so it blocks too, as do writes.
//
// The fixed twin applies the PR: maybeScheduleFlush runs before the wait.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type memTable struct {
	writerRefs atomic.Int32
	size       int
}

func (m *memTable) writerRef()          { m.writerRefs.Add(1) }
func (m *memTable) writerUnref() bool   { return m.writerRefs.Add(-1) == 0 }
func (m *memTable) readyForFlush() bool { return m.writerRefs.Load() == 0 }

type flushableEntry struct {
	flushable            *memTable
	flushed              chan struct{}
	delayedFlushForcedAt time.Time
}

type Options struct {
	MemTableSize                int
	MemTableStopWritesThreshold int
	FlushDelayDeleteRange       time.Duration
}

type Batch struct {
	data           []byte
	countRangeDels int
}

type commitPipeline struct {
	mu sync.Mutex
	d  *DB
}

func (p *commitPipeline) Commit(b *Batch) {
	p.mu.Lock()
	p.d.mu.Lock()
	mem := p.d.mu.mem.mutable
	mem.writerRef()
	p.d.mu.Unlock()
	p.mu.Unlock()
	p.d.commitApply(b, mem)
}

func (p *commitPipeline) AllocateSeqNum(prepare func(), apply func()) {
	p.mu.Lock()
	prepare()
	p.mu.Unlock()
	apply()
}

type DB struct {
	opts   *Options
	commit *commitPipeline
	mu     struct {
		sync.Mutex
		mem struct {
			mutable *memTable
			queue   []*flushableEntry
		}
		compact struct {
			cond     sync.Cond
			flushing bool
		}
	}
}

func (d *DB) commitApply(b *Batch, mem *memTable) {
	mem.size += len(b.data)
	if b.countRangeDels > 0 && d.opts.FlushDelayDeleteRange > 0 {
		d.mu.Lock()
		d.maybeScheduleDelayedFlush(mem, d.opts.FlushDelayDeleteRange)
		d.mu.Unlock()
	}
	if mem.writerUnref() {
		d.mu.Lock()
		d.maybeScheduleFlush()
		d.mu.Unlock()
	}
}

func (d *DB) maybeScheduleFlush() {
	if d.mu.compact.flushing || len(d.mu.mem.queue) <= 1 || !d.passedFlushThreshold() {
		return
	}
	d.mu.compact.flushing = true
	go d.flush()
}

func (d *DB) passedFlushThreshold() bool {
	var n, size int
	for ; n < len(d.mu.mem.queue)-1 && d.mu.mem.queue[n].flushable.readyForFlush(); n++ {
		size += d.mu.mem.queue[n].flushable.size
	}
	return n > 0 && size >= d.opts.MemTableSize/2
}

func (d *DB) flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for ; n < len(d.mu.mem.queue)-1 && d.mu.mem.queue[n].flushable.readyForFlush(); n++ {
		close(d.mu.mem.queue[n].flushed)
	}
	d.mu.mem.queue = d.mu.mem.queue[n:]
	d.mu.compact.flushing = false
	d.mu.compact.cond.Broadcast()
}

func (d *DB) maybeScheduleDelayedFlush(tbl *memTable, dur time.Duration) {
	var mem *flushableEntry
	for _, m := range d.mu.mem.queue {
		if m.flushable == tbl {
			mem = m
		}
	}
	if mem == nil || !mem.delayedFlushForcedAt.IsZero() {
		return
	}
	mem.delayedFlushForcedAt = time.Now().Add(dur)
	go func() {
		timer := time.NewTimer(dur)
		defer timer.Stop()
		select {
		case <-mem.flushed:
		case <-timer.C:
			d.commit.mu.Lock()
			defer d.commit.mu.Unlock()
			d.mu.Lock()
			defer d.mu.Unlock()
			d.maybeScheduleFlush()
		}
	}()
}

func (d *DB) rotateMemtable(ingested *flushableEntry) {
	if ingested != nil {
		d.mu.mem.queue = append(d.mu.mem.queue, ingested)
	}
	d.mu.mem.mutable = &memTable{}
	d.mu.mem.queue = append(d.mu.mem.queue, &flushableEntry{flushable: d.mu.mem.mutable, flushed: make(chan struct{})})
	d.maybeScheduleFlush()
}

func (d *DB) makeRoomForWrite(ingested *flushableEntry) {
	for len(d.mu.mem.queue) >= d.opts.MemTableStopWritesThreshold {
		d.maybeScheduleFlush()
		d.mu.compact.cond.Wait()
	}
	d.rotateMemtable(ingested)
}

func (d *DB) Ingest(path string) {
	var mem *memTable
	prepare := func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		mem = d.mu.mem.mutable
		mem.writerRef()
		d.makeRoomForWrite(&flushableEntry{flushable: &memTable{}, flushed: make(chan struct{})})
	}
	apply := func() { mem.writerUnref() }
	d.commit.AllocateSeqNum(prepare, apply)
}

func main() {
	d := &DB{opts: &Options{MemTableSize: 64, MemTableStopWritesThreshold: 3, FlushDelayDeleteRange: 30 * time.Millisecond}}
	d.commit = &commitPipeline{d: d}
	d.mu.compact.cond.L = &d.mu.Mutex
	d.mu.mem.mutable = &memTable{}
	d.mu.mem.queue = []*flushableEntry{{flushable: d.mu.mem.mutable, flushed: make(chan struct{})}}

	d.commit.Commit(&Batch{data: make([]byte, 48)})
	d.commit.Commit(&Batch{data: make([]byte, 8), countRangeDels: 1})
	d.Ingest("000007.sst")

	go d.Ingest("000008.sst")
	time.Sleep(100 * time.Millisecond)
	d.commit.Commit(&Batch{data: []byte("k=v")})
	fmt.Println("ingested 2 sstables, write committed")
}
