// Project: badger (value.go, db.go: valueLog.flushDiscardStats / db.sendToWriteCh / db.doWrites)
// Bug: flushDiscardStats held vlog.lfDiscardStats lock while pushing the encoded stats
// through db.sendToWriteCh and waiting for the write to complete. The single writer
// goroutine (doWrites) updates discard stats while applying earlier requests and needs the
// same lock, so the flusher waits for the writer and the writer waits for the lock.
// Upstream fix: encode the stats under the lock, release it, then send; flushing was moved
// to a dedicated goroutine fed by a channel (badger v2 "Fix deadlock in discard stats",
// PR number not recalled exactly; shape modelled faithfully).
package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

var lfDiscardStatsKey = []byte("!badger!discard")

type Entry struct {
	Key, Value []byte
	// ValuePointer into a previous vlog file that this write overwrites.
	oldFid uint32
	oldLen int64
}

type request struct {
	Entries []*Entry
	Wg      sync.WaitGroup
	Err     error
}

func (r *request) Wait() error { r.Wg.Wait(); return r.Err }

type lfDiscardStats struct {
	sync.RWMutex
	m                 map[uint32]int64
	updatesSinceFlush int
}

type valueLog struct {
	db             *DB
	lfDiscardStats *lfDiscardStats
}

type DB struct {
	writeCh chan *request
	vlog    *valueLog
	closeC  chan struct{}
}

func (vlog *valueLog) updateDiscardStats(stats map[uint32]int64) {
	vlog.lfDiscardStats.Lock()
	defer vlog.lfDiscardStats.Unlock()
	for fid, sz := range stats {
		vlog.lfDiscardStats.m[fid] += sz
		vlog.lfDiscardStats.updatesSinceFlush++
	}
}

func (vlog *valueLog) flushDiscardStats() error {
	vlog.lfDiscardStats.Lock()
	defer vlog.lfDiscardStats.Unlock()
	if vlog.lfDiscardStats.updatesSinceFlush == 0 {
		return nil
	}
	encoded, err := json.Marshal(vlog.lfDiscardStats.m)
	if err != nil {
		return err
	}
	req, err := vlog.db.sendToWriteCh([]*Entry{{Key: lfDiscardStatsKey, Value: encoded}})
	if err != nil {
		return fmt.Errorf("failed to push discard stats to write channel: %w", err)
	}
	vlog.lfDiscardStats.updatesSinceFlush = 0
	return req.Wait() // DEADLOCK HERE
}

func (db *DB) sendToWriteCh(entries []*Entry) (*request, error) {
	req := &request{Entries: entries}
	req.Wg.Add(1)
	db.writeCh <- req
	return req, nil
}

func (db *DB) writeRequests(reqs []*request) {
	stats := map[uint32]int64{}
	for _, r := range reqs {
		for _, e := range r.Entries {
			if e.oldLen > 0 {
				stats[e.oldFid] += e.oldLen
			}
		}
	}
	if len(stats) > 0 {
		db.vlog.updateDiscardStats(stats)
	}
	for _, r := range reqs {
		r.Wg.Done()
	}
}

// doWrites is the single writer goroutine.
func (db *DB) doWrites() {
	for {
		select {
		case r := <-db.writeCh:
			reqs := []*request{r}
			time.Sleep(10 * time.Millisecond) // batch up more requests
		drain:
			for {
				select {
				case r := <-db.writeCh:
					reqs = append(reqs, r)
				default:
					break drain
				}
			}
			db.writeRequests(reqs)
		case <-db.closeC:
			return
		}
	}
}

func main() {
	db := &DB{writeCh: make(chan *request, 16), closeC: make(chan struct{})}
	db.vlog = &valueLog{db: db, lfDiscardStats: &lfDiscardStats{m: map[uint32]int64{}}}
	go db.doWrites()

	db.vlog.updateDiscardStats(map[uint32]int64{1: 4096})
	// A user write overwriting a key in vlog file 2.
	userReq, _ := db.sendToWriteCh([]*Entry{{Key: []byte("k"), Value: []byte("v2"), oldFid: 2, oldLen: 128}})
	time.Sleep(2 * time.Millisecond)
	if err := db.vlog.flushDiscardStats(); err != nil {
		fmt.Println("flush:", err)
	}
	_ = userReq.Wait()
	close(db.closeC)
	fmt.Println("done")
}
