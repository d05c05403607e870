// Project: openGemini/openGemini (time-series database), v1.0 dev, February 2023.
// Files: engine/immutable/tssp_reader.go (tsspFile.FreeMemory, Path, Inuse, Ref, Unref,
// RemoveFromEvictListUnSafe), engine/immutable/mms_tables.go and evict.go (TablesGC,
// TableStoreGC.Add, the nodeTableStoreGC global, memReaderEvictCtx.evictMemReaders).
// Issue openGemini/openGemini#117 "The method tsspFile.FreeMemory may be deadlocked".
//
// When the node is over its memory budget the evictor walks the per-level evict lists and calls
// FreeMemory(false) on each TSSP file. FreeMemory write-locks f.mu; if a query still holds a
// reference to the file (Inuse), it hands the file to the global table-store GC to free later,
// and did so before unlocking: nodeTableStoreGC is the TablesGC interface, its Add takes the GC's
// own lock and keys the file by f.Path(), and Path goes back through the TSSPFile interface to the
// same tsspFile and read-locks f.mu, which this goroutine already holds for writing (the issue:
// "line 464 runs inside the lock and calls the method at line 427, which requests the read lock").
// The fix unlocks f.mu before calling nodeTableStoreGC.Add.
package main

import (
	"container/list"
	"fmt"
	"sync"
	"sync/atomic"
)

type TSSPFile interface {
	Path() string
	Inuse() bool
	Ref()
	Unref()
	FreeMemory(evictLock bool) int64
}

type TablesGC interface {
	Add(free bool, files ...TSSPFile)
}

type TableStoreGC struct {
	mu          sync.RWMutex
	freeFiles   map[string]TSSPFile
	removeFiles map[string]TSSPFile
}

func NewTableStoreGC() TablesGC {
	return &TableStoreGC{freeFiles: make(map[string]TSSPFile, 8), removeFiles: make(map[string]TSSPFile, 8)}
}

func (sgc *TableStoreGC) Add(free bool, files ...TSSPFile) {
	sgc.mu.Lock()
	for _, f := range files {
		fName := f.Path()
		if free {
			sgc.freeFiles[fName] = f
		} else {
			delete(sgc.freeFiles, fName)
			sgc.removeFiles[fName] = f
		}
	}
	sgc.mu.Unlock()
}

var nodeTableStoreGC = NewTableStoreGC()

type TSSPFileName struct {
	seq   uint64
	level uint16
	order bool
}

type tsspFileReader struct {
	fileName  string
	inMemSize int64
}

func (r *tsspFileReader) FileName() string { return r.fileName }
func (r *tsspFileReader) FreeMemory() int64 {
	size := r.inMemSize
	r.inMemSize = 0
	return size
}

type tsspFile struct {
	mu     sync.RWMutex
	ref    int32
	name   TSSPFileName
	reader *tsspFileReader
	memEle *list.Element
}

func (f *tsspFile) Ref()        { atomic.AddInt32(&f.ref, 1) }
func (f *tsspFile) Unref()      { atomic.AddInt32(&f.ref, -1) }
func (f *tsspFile) Inuse() bool { return atomic.LoadInt32(&f.ref) > 1 }

func (f *tsspFile) Path() string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.reader.FileName()
}

func (f *tsspFile) FreeMemory(evictLock bool) int64 {
	f.mu.Lock()
	if f.Inuse() {
		nodeTableStoreGC.Add(true, f)
		f.mu.Unlock()
		return 0
	}
	size := f.reader.FreeMemory()
	level := f.name.level
	f.mu.Unlock()
	if !evictLock {
		nodeEvictCtx.RemoveFromEvictListUnSafe(level, f)
	}
	return size
}

type memReaderEvictCtx struct {
	mu        sync.Mutex
	evictList map[uint16]*list.List
}

var nodeEvictCtx = &memReaderEvictCtx{evictList: map[uint16]*list.List{0: list.New()}}

func (ctx *memReaderEvictCtx) AddToEvictList(level uint16, f *tsspFile) {
	ctx.mu.Lock()
	f.memEle = ctx.evictList[level].PushFront(f)
	ctx.mu.Unlock()
}

func (ctx *memReaderEvictCtx) RemoveFromEvictListUnSafe(level uint16, f *tsspFile) {
	if f.memEle != nil {
		ctx.evictList[level].Remove(f.memEle)
		f.memEle = nil
	}
}

func (ctx *memReaderEvictCtx) evictMemReaders(need int64) int64 {
	ctx.mu.Lock()
	defer ctx.mu.Unlock()
	var freed int64
	for _, l := range ctx.evictList {
		for e := l.Back(); e != nil && freed < need; {
			prev := e.Prev()
			freed += e.Value.(TSSPFile).FreeMemory(false)
			e = prev
		}
	}
	return freed
}

func main() {
	f := &tsspFile{ref: 1, name: TSSPFileName{seq: 12, level: 0, order: true},
		reader: &tsspFileReader{fileName: "/data/openGemini/data/db0/0/rp0/1_1672531200_1672617600_1/tssp/cpu_0000/00000012-0000-00000000.tssp", inMemSize: 64 << 20}}
	nodeEvictCtx.AddToEvictList(0, f)

	// A query reading cpu_0000 holds a reference to the file.
	f.Ref()
	// The memory checker finds the node over its immutable-table budget.
	freed := nodeEvictCtx.evictMemReaders(32 << 20)
	fmt.Println("freed", freed, "bytes")
	f.Unref()
}
