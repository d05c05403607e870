// Project: nats-io/nats-server (server/filestore.go: msgBlock.fetchMsg, msgBlock.loadMsgsWithLock, msgBlock.flushPendingMsgsLocked, fileStore.rebuildState), JetStream file store, v2.9.x, January 2023 (PR #3832 "Deadlock on dataloss when holding mb lock"; code approximate).
// Bug: a read of a message whose block cache was trimmed by the async flusher goes through fetchMsg, which write-locks the block (mb.mu) and calls loadMsgsWithLock; that first flushes the pending write cache, and when the write fails the block rebuilds itself and reports lost data. loadMsgsWithLock then called mb.fs.rebuildState(ld) inline, which takes fs.mu and read-locks mb.mu of every block, including the one this goroutine already holds, so the reader deadlocks and the stream store is wedged. The fix runs rebuildState in its own goroutine.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

type LostStreamData struct {
	Msgs  []uint64
	Bytes uint64
}
type StreamState struct{ Msgs, Bytes, FirstSeq, LastSeq uint64 }

// Write through caching layer that is also used on loading messages.
type cache struct {
	buf     []byte
	off, wp int
	idx     []uint32
	fseq    uint64
}

type fileStore struct {
	mu    sync.RWMutex
	state StreamState
	ld    *LostStreamData
	blks  []*msgBlock
}

type msgBlock struct {
	mu           sync.RWMutex
	fs           *fileStore
	first, last  uint64 // sequences
	msgs, bytes  uint64
	cache        *cache
	disk         []byte // what landed in the .blk file
	mockWriteErr bool   // Used to mock write failures.
}

var errFlushWrite = errors.New("write msgs/1.blk: no space left on device")

func (fs *fileStore) StoreMsg(msg string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	seq := fs.state.LastSeq + 1
	rec := binary.LittleEndian.AppendUint64(nil, seq) // seq(8) | len(1) | payload
	rec = append(append(rec, byte(len(msg))), msg...)
	fs.blks[len(fs.blks)-1].writeMsgRecord(rec, seq)
	fs.state.Msgs, fs.state.Bytes, fs.state.LastSeq = fs.state.Msgs+1, fs.state.Bytes+uint64(len(rec)), seq
}

// Write into the block's write-through cache; the flusher writes it out.
func (mb *msgBlock) writeMsgRecord(rec []byte, seq uint64) {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if mb.cache.fseq == 0 && len(mb.cache.buf) == 0 {
		mb.cache.fseq = seq
	}
	mb.cache.idx = append(mb.cache.idx, uint32(mb.cache.off+len(mb.cache.buf)))
	mb.cache.buf = append(mb.cache.buf, rec...)
	if mb.msgs == 0 {
		mb.first = seq
	}
	mb.last = seq
	mb.msgs, mb.bytes = mb.msgs+1, mb.bytes+uint64(len(rec))
}

func (mb *msgBlock) flushPendingMsgsLocked() (*LostStreamData, error) {
	buf := mb.cache.buf[mb.cache.wp:]
	if len(buf) == 0 {
		return nil, nil
	}
	if mb.mockWriteErr {
		// Make sure our state reflects what actually landed on disk.
		ld, _ := mb.rebuildStateLocked()
		return ld, errFlushWrite
	}
	mb.disk = append(mb.disk, buf...)
	// No load interest: drop the buffer and remember the disk offset.
	mb.cache = &cache{off: len(mb.disk)}
	return nil, nil
}

// Rebuild the block's accounting from the block file. Lock should be held.
func (mb *msgBlock) rebuildStateLocked() (*LostStreamData, error) {
	startLastSeq, startBytes := mb.last, mb.bytes
	mb.msgs, mb.bytes = 0, 0
	for off := 0; off+9 <= len(mb.disk); off += 9 + int(mb.disk[off+8]) {
		mb.last = binary.LittleEndian.Uint64(mb.disk[off:])
		mb.msgs, mb.bytes = mb.msgs+1, mb.bytes+uint64(9+int(mb.disk[off+8]))
	}
	var ld *LostStreamData
	if startLastSeq > mb.last {
		ld = &LostStreamData{Bytes: startBytes - mb.bytes}
		for seq := mb.last + 1; seq <= startLastSeq; seq++ {
			ld.Msgs = append(ld.Msgs, seq)
		}
	}
	mb.cache = &cache{off: len(mb.disk)}
	return ld, nil
}

func (mb *msgBlock) cacheAlreadyLoaded() bool {
	if mb.cache.off != 0 || mb.cache.fseq == 0 || len(mb.cache.buf) == 0 {
		return false
	}
	return uint64(len(mb.cache.idx)) == mb.msgs
}

// Lock should be held.
func (mb *msgBlock) loadMsgsWithLock() error {
	if len(mb.cache.buf) > mb.cache.wp {
		ld, err := mb.flushPendingMsgsLocked()
		if ld != nil && mb.fs != nil {
			// We have the mb lock here, this needs the mb locks so do in its own go routine.
			go mb.fs.rebuildState(ld)
		}
		if err != nil {
			return err
		}
	}
	mb.cache = &cache{buf: append([]byte(nil), mb.disk...), wp: len(mb.disk), fseq: mb.first}
	for off := 0; off+9 <= len(mb.disk); off += 9 + int(mb.disk[off+8]) {
		mb.cache.idx = append(mb.cache.idx, uint32(off))
	}
	return nil
}

func (mb *msgBlock) fetchMsg(seq uint64) (string, error) {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	if !mb.cacheAlreadyLoaded() {
		if err := mb.loadMsgsWithLock(); err != nil {
			return "", err
		}
	}
	off := mb.cache.idx[seq-mb.cache.fseq]
	return string(mb.cache.buf[off+9 : off+9+uint32(mb.cache.buf[off+8])]), nil
}

func (fs *fileStore) rebuildState(ld *LostStreamData) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.rebuildStateLocked(ld)
}
func (fs *fileStore) rebuildStateLocked(ld *LostStreamData) {
	if fs.ld != nil {
		fs.ld.Msgs, fs.ld.Bytes = append(fs.ld.Msgs, ld.Msgs...), fs.ld.Bytes+ld.Bytes
	} else {
		fs.ld = ld
	}
	fs.state = StreamState{}
	for _, mb := range fs.blks {
		mb.mu.RLock()
		fs.state.Msgs += mb.msgs
		fs.state.Bytes += mb.bytes
		if fs.state.FirstSeq == 0 || mb.first < fs.state.FirstSeq {
			fs.state.FirstSeq = mb.first
		}
		fs.state.LastSeq = mb.last
		mb.mu.RUnlock()
	}
}

func (fs *fileStore) msgForSeq(seq uint64) (string, error) {
	fs.mu.RLock()
	var mb *msgBlock
	for _, b := range fs.blks {
		if seq >= b.first && seq <= b.last {
			mb = b
		}
	}
	fs.mu.RUnlock()
	if mb == nil {
		return "", errors.New("no message found")
	}
	return mb.fetchMsg(seq)
}

func main() {
	fs := &fileStore{}
	mb := &msgBlock{fs: fs, cache: &cache{}}
	fs.blks = []*msgBlock{mb}
	fs.StoreMsg("order-1")
	fs.StoreMsg("order-2")
	// The async flusher (mb.flushPendingMsgs) writes the block and trims the write cache.
	mb.mu.Lock()
	mb.flushPendingMsgsLocked()
	mb.mu.Unlock()
	fs.StoreMsg("order-3")
	mb.mockWriteErr = true      // the disk fills up before the next flush
	msg, err := fs.msgForSeq(1) // a consumer redelivers message 1
	fmt.Printf("load seq 1: msg=%q err=%v\n", msg, err)
	time.Sleep(50 * time.Millisecond) // let a background rebuild finish
	fs.mu.RLock()
	fmt.Printf("stream state: %+v lost=%+v\n", fs.state, *fs.ld)
}
