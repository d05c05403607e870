// Project: prometheus/tsdb, the Prometheus 2.0 storage engine (db.go DB.compact, DB.Appender, dbAppender.appenderFor; head.go HeadBlock.Appender, HeadBlock.Close), March 2017 (prometheus/tsdb issue #11 "Mystery deadlock"; reconstruction approximate).
// Bug: a head block appender holds the block's mtx read lock from HeadBlock.Appender until Commit, and when a sample falls past the open head blocks dbAppender.appenderFor write-locks db.headmtx to cut a new head. Compaction read-locked db.headmtx and, still holding it, closed the completed head blocks, and HeadBlock.Close write-locks the block's mtx, so a scrape appender crossing a block boundary and a concurrent compaction deadlock AB-BA (headmtx "must never be held when acquiring a block's mutex"). The fix collects the completed heads under headmtx and closes them after releasing it ("We have to close the head block outside of the lock since it will wait for pending appenders").
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type BlockMeta struct {
	ULID             string
	MinTime, MaxTime int64
	Sequence         int
}

// HeadBlock handles reads and writes of time series data within a time window.
type HeadBlock struct {
	mtx        sync.RWMutex
	meta       BlockMeta
	numSamples uint64
	closed     bool
}

// Appender returns a new Appender against the head block. The read lock is
// held until the appender is committed or rolled back.
func (h *HeadBlock) Appender() *headAppender {
	h.mtx.RLock()
	return &headAppender{HeadBlock: h}
}

// Close the head block; the write lock waits for pending appenders.
func (h *HeadBlock) Close() error {
	h.mtx.Lock()
	defer h.mtx.Unlock()
	h.closed = true
	return nil
}

type headAppender struct {
	*HeadBlock
	pending []float64
}

func (a *headAppender) Add(lset string, t int64, v float64) { a.pending = append(a.pending, v) }

func (a *headAppender) Commit() error {
	defer a.mtx.RUnlock()
	atomic.AddUint64(&a.numSamples, uint64(len(a.pending)))
	return nil
}

type DB struct {
	// Mutex that must be held when modifying the general block layout.
	mtx    sync.RWMutex
	blocks []BlockMeta

	// Mutex that must be held when modifying just the head blocks
	// or the general layout. Must never be held when acquiring a block's mutex!
	headmtx sync.RWMutex
	heads   []*HeadBlock

	minBlockDuration int64
	appendableBlocks int
}

// ensureHead cuts new head blocks until one covers t. headmtx must be held.
func (db *DB) ensureHead(t int64) {
	for t >= db.heads[len(db.heads)-1].meta.MaxTime {
		mint, seq := db.heads[len(db.heads)-1].meta.MaxTime, len(db.heads)+len(db.blocks)
		db.heads = append(db.heads, &HeadBlock{meta: BlockMeta{
			ULID: fmt.Sprintf("01BKGV%03d", seq), MinTime: mint, MaxTime: mint + db.minBlockDuration, Sequence: seq,
		}})
	}
}

// appendable returns the head blocks new samples may go into. headmtx must be held.
func (db *DB) appendable() []*HeadBlock {
	if len(db.heads) <= db.appendableBlocks {
		return db.heads
	}
	return db.heads[len(db.heads)-db.appendableBlocks:]
}

// completedHeads returns heads that fell out of the appendable window. headmtx must be held.
func (db *DB) completedHeads() []*HeadBlock {
	if len(db.heads) <= db.appendableBlocks {
		return nil
	}
	return db.heads[:len(db.heads)-db.appendableBlocks]
}

type metaAppender struct {
	meta BlockMeta
	app  *headAppender
}

type dbAppender struct {
	db    *DB
	heads []*metaAppender
}

// Appender opens a new appender against the database.
func (db *DB) Appender() *dbAppender {
	db.mtx.RLock()
	a := &dbAppender{db: db}
	db.headmtx.RLock()
	for _, b := range db.appendable() {
		a.heads = append(a.heads, &metaAppender{meta: b.meta, app: b.Appender()})
	}
	db.headmtx.RUnlock()
	return a
}

func (a *dbAppender) appenderFor(t int64) *metaAppender {
	// If there's no fitting head block for t, ensure it gets created.
	if t >= a.heads[len(a.heads)-1].meta.MaxTime {
		a.db.headmtx.Lock()
		a.db.ensureHead(t)
		var newHeads []*HeadBlock
		maxSeq := a.heads[len(a.heads)-1].meta.Sequence
		for _, b := range a.db.appendable() {
			if b.meta.Sequence > maxSeq {
				newHeads = append(newHeads, b)
			}
		}
		a.db.headmtx.Unlock()
		for _, b := range newHeads {
			a.heads = append(a.heads, &metaAppender{meta: b.meta, app: b.Appender()})
		}
	}
	for i := len(a.heads) - 1; i > 0; i-- {
		if a.heads[i].meta.MinTime <= t {
			return a.heads[i]
		}
	}
	return a.heads[0]
}

func (a *dbAppender) Add(lset string, t int64, v float64) { a.appenderFor(t).app.Add(lset, t, v) }

func (a *dbAppender) Commit() error {
	defer a.db.mtx.RUnlock()
	for _, h := range a.heads {
		h.app.Commit()
	}
	return nil
}

// compact persists completed head blocks and reloads the block layout.
func (db *DB) compact() {
	db.headmtx.RLock()
	singles := append([]*HeadBlock(nil), db.completedHeads()...)
	db.headmtx.RUnlock()

	// We have to close the head block outside of the lock since it will
	// wait for pending appenders.
	for _, h := range singles {
		h.Close()
	}

	for _, h := range singles {
		// Write the block to disk and swap it into the layout.
		db.mtx.Lock()
		db.headmtx.Lock()
		db.blocks, db.heads = append(db.blocks, h.meta), db.heads[1:]
		db.headmtx.Unlock()
		db.mtx.Unlock()
		fmt.Printf("compact: persisted head %s (%d samples)\n", h.meta.ULID, atomic.LoadUint64(&h.numSamples))
	}
}

func main() {
	const hour = int64(time.Hour / time.Millisecond)
	db := &DB{minBlockDuration: 2 * hour, appendableBlocks: 2}
	db.heads = []*HeadBlock{{meta: BlockMeta{ULID: "01BKGV000", MaxTime: 2 * hour}}}

	var wg sync.WaitGroup
	wg.Add(2)
	scrapeStarted := make(chan struct{})
	// Scrape loop of a slow target: its appender stays open across the block boundary.
	go func() {
		defer wg.Done()
		app := db.Appender()
		app.Add(`up{job="node"}`, 1*hour, 1)
		close(scrapeStarted)
		time.Sleep(100 * time.Millisecond)
		app.Add(`up{job="node"}`, 5*hour, 1)
		app.Commit()
		fmt.Println("scrape: committed")
	}()
	// Another scrape cuts the next heads, then the compactor kicks in.
	go func() {
		defer wg.Done()
		<-scrapeStarted
		app := db.Appender()
		app.Add(`up{job="prometheus"}`, 4*hour+30, 1)
		app.Commit()
		db.compact()
	}()
	wg.Wait()
	fmt.Println("done")
}
