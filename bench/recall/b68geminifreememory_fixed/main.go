// Fixed twin: shape of openGemini issue #117 ("The method tsspFile.FreeMemory may be
// deadlocked").
//
// The memory evictor walks the per-level evict lists and calls
// tsspFile.FreeMemory. FreeMemory write-locks the file and, if a query still
// holds the file, hands it to the global TablesGC (nodeTableStoreGC) while
// still holding the lock. TableStoreGC.Add keys its map by f.Path(), a call
// back into the file through the TSSPFile interface that read-locks the same
// file: the evictor blocks on itself, and the GC loop and the query queue up.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
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
	GC()
}

type TableStoreGC struct {
	mu          sync.RWMutex
	freeFiles   map[string]TSSPFile
	removeFiles map[string]TSSPFile
}

func NewTableStoreGC() TablesGC {
	return &TableStoreGC{freeFiles: map[string]TSSPFile{}, removeFiles: map[string]TSSPFile{}}
}

func (sgc *TableStoreGC) Add(free bool, files ...TSSPFile) {
	sgc.mu.Lock()
	for _, f := range files {
		if free {
			sgc.freeFiles[f.Path()] = f
		} else {
			sgc.removeFiles[f.Path()] = f
		}
	}
	sgc.mu.Unlock()
}

func (sgc *TableStoreGC) GC() {
	for i := 0; i < 10; i++ {
		time.Sleep(10 * time.Millisecond)
		var ready []TSSPFile
		sgc.mu.Lock()
		for name, f := range sgc.freeFiles {
			if !f.Inuse() {
				delete(sgc.freeFiles, name)
				ready = append(ready, f)
			}
		}
		sgc.mu.Unlock()
		for _, f := range ready {
			f.FreeMemory(true)
		}
	}
}

var nodeTableStoreGC TablesGC

type tsspFileReader struct {
	fileName string
	memSize  int64
}

func (r *tsspFileReader) FreeMemory() int64 { s := r.memSize; r.memSize = 0; return s }

type tsspFile struct {
	mu     sync.RWMutex
	level  uint16
	ref    int32
	reader *tsspFileReader
}

func (f *tsspFile) Path() string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.reader.fileName
}

func (f *tsspFile) Inuse() bool { return atomic.LoadInt32(&f.ref) > 1 }
func (f *tsspFile) Ref()        { atomic.AddInt32(&f.ref, 1) }
func (f *tsspFile) Unref()      { atomic.AddInt32(&f.ref, -1) }

func (f *tsspFile) FreeMemory(evictLock bool) int64 {
	f.mu.Lock()
	if f.Inuse() {
		f.mu.Unlock()
		// Add calls back into f.Path, so it runs outside f.mu.
		nodeTableStoreGC.Add(true, f)
		return 0
	}
	size := f.reader.FreeMemory()
	level := f.level
	f.mu.Unlock()
	if evictLock {
		nodeEvictCtx.remove(level, f)
	}
	return size
}

// memReaderEvictCtx keeps the files whose readers hold memory, per level.
type memReaderEvictCtx struct {
	mu    [2]sync.Mutex
	lists [2][]TSSPFile
}

var nodeEvictCtx = &memReaderEvictCtx{}

func (e *memReaderEvictCtx) remove(level uint16, f TSSPFile) {
	e.mu[level].Lock()
	defer e.mu[level].Unlock()
	for i, x := range e.lists[level] {
		if x == f {
			e.lists[level] = append(e.lists[level][:i], e.lists[level][i+1:]...)
			return
		}
	}
}

// evictMemReaders frees reader memory when the node is over its limit.
func (e *memReaderEvictCtx) evictMemReaders() (freed int64) {
	for level := range e.lists {
		e.mu[level].Lock()
		var kept []TSSPFile
		for _, f := range e.lists[level] {
			if n := f.FreeMemory(false); n > 0 {
				freed += n
			} else {
				kept = append(kept, f)
			}
		}
		e.lists[level] = kept
		e.mu[level].Unlock()
	}
	return freed
}

func main() {
	nodeTableStoreGC = NewTableStoreGC()
	files := []*tsspFile{
		{level: 0, ref: 1, reader: &tsspFileReader{fileName: "/data/cpu/00000001-0000-00000000.tssp", memSize: 4 << 20}},
		{level: 0, ref: 1, reader: &tsspFileReader{fileName: "/data/cpu/00000002-0000-00000000.tssp", memSize: 4 << 20}},
		{level: 1, ref: 1, reader: &tsspFileReader{fileName: "/data/cpu/00000003-0001-00000000.tssp", memSize: 8 << 20}},
	}
	for _, f := range files {
		nodeEvictCtx.lists[f.level] = append(nodeEvictCtx.lists[f.level], f)
	}

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); nodeTableStoreGC.GC() }()
	go func() { // a query reading file 2
		defer wg.Done()
		files[1].Ref()
		time.Sleep(30 * time.Millisecond)
		fmt.Println("query read", files[1].Path())
		files[1].Unref()
	}()
	go func() { // the memory evictor fires while the query runs
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		fmt.Println("evicted bytes:", nodeEvictCtx.evictMemReaders())
	}()
	wg.Wait()
}
