// Project: seaweedfs/seaweedfs (weed/mount/page_writer/upload_pipeline.go, weed/util/limiter.go), weed mount 3.5x
// Issue: seaweedfs/seaweedfs#4953 "Fuse mount deadlock on write" (and #4952), fixed by PR #5019 "Waiting for writes to complete with acquired lock may lead to deadlock"
//
// Fixed twin: as in PR #5019, FlushAll seals the writable chunks in
// flushChunks under chunksLock and waits for the uploads only after releasing
// it, so an upload job can take chunksLock, finish, and free its executor slot.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ---- weed/util/limiter.go ----

// LimitedConcurrentExecutor runs jobs with at most limit of them at a time.
type LimitedConcurrentExecutor struct {
	limit       int
	limitCond   *sync.Cond
	concurrency int
}

func NewLimitedConcurrentExecutor(limit int) *LimitedConcurrentExecutor {
	return &LimitedConcurrentExecutor{
		limit:     limit,
		limitCond: sync.NewCond(new(sync.Mutex)),
	}
}

func (c *LimitedConcurrentExecutor) Execute(job func()) {
	c.limitCond.L.Lock()
	for c.concurrency >= c.limit {
		c.limitCond.Wait()
	}
	c.concurrency++
	c.limitCond.L.Unlock()

	go func() {
		job()
		c.limitCond.L.Lock()
		c.concurrency--
		c.limitCond.Signal()
		c.limitCond.L.Unlock()
	}()
}

// ---- weed/mount/page_writer ----

type LogicChunkIndex int

type SaveToStorageFunc func(logicChunkIndex LogicChunkIndex, data []byte)

type PageChunk interface {
	WriteDataAt(src []byte, offset int64) int
	IsComplete() bool
	SaveContent(saveFn SaveToStorageFunc)
}

type MemChunk struct {
	logicChunkIndex LogicChunkIndex
	buf             []byte
	written         int64
}

func NewMemChunk(idx LogicChunkIndex, chunkSize int64) *MemChunk {
	return &MemChunk{logicChunkIndex: idx, buf: make([]byte, chunkSize)}
}

func (mc *MemChunk) WriteDataAt(src []byte, offset int64) int {
	n := copy(mc.buf[offset%int64(len(mc.buf)):], src)
	mc.written += int64(n)
	return n
}

func (mc *MemChunk) IsComplete() bool { return mc.written >= int64(len(mc.buf)) }

func (mc *MemChunk) SaveContent(saveFn SaveToStorageFunc) { saveFn(mc.logicChunkIndex, mc.buf) }

type SealedChunk struct {
	chunk            PageChunk
	referenceCounter int
}

type UploadPipeline struct {
	uploaderCount     int32
	uploaderCountCond *sync.Cond
	ChunkSize         int64
	uploaders         *LimitedConcurrentExecutor
	saveToStorageFn   SaveToStorageFunc
	chunksLock        sync.Mutex
	writableChunks    map[LogicChunkIndex]PageChunk
	sealedChunks      map[LogicChunkIndex]*SealedChunk
}

func NewUploadPipeline(writers *LimitedConcurrentExecutor, chunkSize int64, saveToStorageFn SaveToStorageFunc) *UploadPipeline {
	return &UploadPipeline{
		ChunkSize:         chunkSize,
		writableChunks:    make(map[LogicChunkIndex]PageChunk),
		sealedChunks:      make(map[LogicChunkIndex]*SealedChunk),
		uploaders:         writers,
		uploaderCountCond: sync.NewCond(&sync.Mutex{}),
		saveToStorageFn:   saveToStorageFn,
	}
}

func (up *UploadPipeline) SaveDataAt(p []byte, off int64) (n int) {
	up.chunksLock.Lock()
	defer up.chunksLock.Unlock()

	logicChunkIndex := LogicChunkIndex(off / up.ChunkSize)
	pageChunk, found := up.writableChunks[logicChunkIndex]
	if !found {
		pageChunk = NewMemChunk(logicChunkIndex, up.ChunkSize)
		up.writableChunks[logicChunkIndex] = pageChunk
	}
	n = pageChunk.WriteDataAt(p, off)
	up.maybeMoveToSealed(pageChunk, logicChunkIndex)
	return
}

func (up *UploadPipeline) FlushAll() {
	up.flushChunks()
	up.waitForCurrentWritersToComplete()
}

func (up *UploadPipeline) flushChunks() {
	up.chunksLock.Lock()
	defer up.chunksLock.Unlock()

	for logicChunkIndex, memChunk := range up.writableChunks {
		up.moveToSealed(memChunk, logicChunkIndex)
	}
}

func (up *UploadPipeline) maybeMoveToSealed(memChunk PageChunk, logicChunkIndex LogicChunkIndex) {
	if memChunk.IsComplete() {
		up.moveToSealed(memChunk, logicChunkIndex)
	}
}

// moveToSealed is called with chunksLock held and returns with it held.
func (up *UploadPipeline) moveToSealed(memChunk PageChunk, logicChunkIndex LogicChunkIndex) {
	atomic.AddInt32(&up.uploaderCount, 1)

	sealedChunk := &SealedChunk{chunk: memChunk, referenceCounter: 1}
	up.sealedChunks[logicChunkIndex] = sealedChunk
	delete(up.writableChunks, logicChunkIndex)

	// unlock before submitting the uploading jobs
	up.chunksLock.Unlock()
	up.uploaders.Execute(func() {
		// first add to the file chunks
		sealedChunk.chunk.SaveContent(up.saveToStorageFn)

		// notify waiting process
		atomic.AddInt32(&up.uploaderCount, -1)
		up.uploaderCountCond.L.Lock()
		up.uploaderCountCond.Broadcast()
		up.uploaderCountCond.L.Unlock()

		// then remove from sealed chunks
		up.chunksLock.Lock()
		defer up.chunksLock.Unlock()
		delete(up.sealedChunks, logicChunkIndex)
		sealedChunk.referenceCounter--
	})
	up.chunksLock.Lock()
}

func (up *UploadPipeline) waitForCurrentWritersToComplete() {
	up.uploaderCountCond.L.Lock()
	t := int32(100)
	for {
		t = atomic.LoadInt32(&up.uploaderCount)
		if t <= 0 {
			break
		}
		up.uploaderCountCond.Wait()
	}
	up.uploaderCountCond.L.Unlock()
}

func main() {
	const chunkSize = 4
	// -concurrentWriters: the executor is shared by every open file of the mount.
	writers := NewLimitedConcurrentExecutor(1)

	var saved int32
	saveToStorage := func(idx LogicChunkIndex, data []byte) {
		// upload the chunk to a volume server and add it to the entry
		time.Sleep(50 * time.Millisecond)
		atomic.AddInt32(&saved, 1)
	}
	up := NewUploadPipeline(writers, chunkSize, saveToStorage)

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // FUSE Write: fills chunk 0, its upload takes the only slot
		defer wg.Done()
		up.SaveDataAt([]byte("abcd"), 0)
	}()
	go func() { // FUSE Write: fills chunk 1, waits for a slot
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		up.SaveDataAt([]byte("efgh"), 4)
	}()
	go func() { // FUSE Flush of the same file handle
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		up.FlushAll()
	}()
	wg.Wait()
	fmt.Println("flushed; chunks uploaded:", atomic.LoadInt32(&saved))
}
