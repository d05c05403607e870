// Project: seaweedfs/seaweedfs (weed/mount/weedfs_file_copy_range.go, weed/mount/weedfs_file_read.go, weed/mount/filehandle_read.go, weed/mount/filehandle.go, weed/mount/dirty_pages_chunked.go), weed mount 3.4x, April 2023.
// Bug: WFS.CopyFileRange read-locks the source handle's entryLock and then reads the source through readDataByFileHandle, whose FileHandle.readFromChunks read-locks the same entryLock again. When a sealed chunk of the source file finishes uploading in between, ChunkedDirtyPages.saveChunkedFileIntervalToStorage calls FileHandle.AddChunks, which queues for entryLock.Lock, so the nested RLock waits behind the writer while the writer waits for the outer RLock and the mount hangs (issue #4405, reported by go-deadlock as recursive locking of entryLock; fixed by PR #4407 "[mount]Fix copy file range", which removes the duplicate entryLock locking from CopyFileRange).
package b113seaweedcopyrange

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"time"
)

type FileHandleId uint64

type Status int

const (
	OK    Status = 0
	EIO   Status = 5
	EBADF Status = 9
)

type CopyFileRangeIn struct{ FhIn, OffIn, FhOut, OffOut, Len, Flags uint64 }

type FileChunk struct {
	FileId       string
	Offset, Size int64
	data         []byte
}

type Entry struct {
	Name     string
	FileSize int64
	Chunks   []*FileChunk
}

// DirtyPages is page_writer.DirtyPages, implemented by ChunkedDirtyPages.
type DirtyPages interface {
	AddPage(offset int64, data []byte, isSequential bool, tsNs int64)
	ReadDirtyDataAt(data []byte, startOffset int64, tsNs int64) (maxStop int64)
	LockForRead(startOffset, stopOffset int64)
	UnlockForRead(startOffset, stopOffset int64)
}

type PageWriter struct {
	fh           *FileHandle
	randomWriter DirtyPages
}

func (pw *PageWriter) AddPage(off int64, data []byte, seq bool, ts int64) {
	pw.randomWriter.AddPage(off, data, seq, ts)
}
func (pw *PageWriter) ReadDirtyDataAt(data []byte, off, ts int64) int64 {
	return pw.randomWriter.ReadDirtyDataAt(data, off, ts)
}
func (pw *PageWriter) LockForRead(start, stop int64)   { pw.randomWriter.LockForRead(start, stop) }
func (pw *PageWriter) UnlockForRead(start, stop int64) { pw.randomWriter.UnlockForRead(start, stop) }

type ChunkedDirtyPages struct {
	fh     *FileHandle
	mu     sync.Mutex
	sealed map[int64][]byte
}

func (pages *ChunkedDirtyPages) AddPage(off int64, data []byte, seq bool, ts int64) {
	pages.mu.Lock()
	pages.sealed[off] = append([]byte(nil), data...)
	pages.mu.Unlock()
}
func (pages *ChunkedDirtyPages) ReadDirtyDataAt(data []byte, off, ts int64) int64 { return off }
func (pages *ChunkedDirtyPages) LockForRead(start, stop int64)                    {}
func (pages *ChunkedDirtyPages) UnlockForRead(start, stop int64)                  {}

// saveChunkedFileIntervalToStorage runs on the upload pipeline once a sealed
// chunk has been written to a volume server.
func (pages *ChunkedDirtyPages) saveChunkedFileIntervalToStorage(reader io.Reader, offset int64, size int64) {
	data, _ := io.ReadAll(reader)
	pages.fh.AddChunks([]*FileChunk{{FileId: "3,01637037d6", Offset: offset, Size: size, data: data}})
}

type FileHandle struct {
	fh            FileHandleId
	entry         *Entry
	entryLock     sync.RWMutex
	inode         uint64
	wfs           *WFS
	dirtyMetadata bool
	dirtyPages    *PageWriter
	sync.RWMutex
}

func (fh *FileHandle) AddChunks(chunks []*FileChunk) {
	fh.entryLock.Lock()
	defer fh.entryLock.Unlock()
	fh.entry.Chunks = append(fh.entry.Chunks, chunks...)
	for _, c := range chunks {
		fh.entry.FileSize = max(fh.entry.FileSize, c.Offset+c.Size)
	}
}

func (fh *FileHandle) lockForRead(start int64, size int) {
	fh.dirtyPages.LockForRead(start, start+int64(size))
}
func (fh *FileHandle) unlockForRead(start int64, size int) {
	fh.dirtyPages.UnlockForRead(start, start+int64(size))
}

func (fh *FileHandle) readFromDirtyPages(buff []byte, startOffset int64, tsNs int64) (maxStop int64) {
	return fh.dirtyPages.ReadDirtyDataAt(buff, startOffset, tsNs)
}

func (fh *FileHandle) readFromChunks(buff []byte, offset int64) (int64, int64, error) {
	fh.entryLock.RLock()
	defer fh.entryLock.RUnlock()

	if fh.entry.FileSize == 0 {
		return 0, 0, io.EOF
	}
	var n int64
	for _, c := range fh.entry.Chunks {
		if c.Offset <= offset && offset < c.Offset+c.Size {
			n += int64(copy(buff[n:], c.data[offset-c.Offset:]))
		}
	}
	return n, time.Now().UnixNano(), nil
}

type FileHandleToInode struct {
	sync.RWMutex
	inode2fh map[uint64]*FileHandle
	fh2inode map[FileHandleId]uint64
}

type WFS struct{ fhmap *FileHandleToInode }

func (wfs *WFS) GetHandle(handleId FileHandleId) *FileHandle {
	wfs.fhmap.RLock()
	defer wfs.fhmap.RUnlock()
	return wfs.fhmap.inode2fh[wfs.fhmap.fh2inode[handleId]]
}

func readDataByFileHandle(buff []byte, fhIn *FileHandle, offset int64) (int64, error) {
	size := len(buff)
	fhIn.lockForRead(offset, size)
	defer fhIn.unlockForRead(offset, size)

	n, tsNs, err := fhIn.readFromChunks(buff, offset)
	if err == nil || err == io.EOF {
		n = max(fhIn.readFromDirtyPages(buff, offset, tsNs)-offset, n)
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// CopyFileRange copies data from one file to another (copy_file_range(2)).
func (wfs *WFS) CopyFileRange(cancel <-chan struct{}, in *CopyFileRangeIn) (written uint32, code Status) {
	fhOut := wfs.GetHandle(FileHandleId(in.FhOut))
	fhIn := wfs.GetHandle(FileHandleId(in.FhIn))
	if fhOut == nil || fhIn == nil {
		return 0, EBADF
	}

	// lock source and target file handles
	fhOut.Lock()
	defer fhOut.Unlock()
	if fhIn.fh != fhOut.fh {
		fhIn.RLock()
		defer fhIn.RUnlock()
		fhIn.entryLock.RLock()
		defer fhIn.entryLock.RUnlock()
	}

	data := make([]byte, in.Len)
	totalRead, err := readDataByFileHandle(data, fhIn, int64(in.OffIn))
	if err != nil {
		return 0, EIO
	}
	fhOut.dirtyPages.AddPage(int64(in.OffOut), data[:totalRead], true, time.Now().UnixNano())
	fhOut.entry.FileSize = max(int64(in.OffOut)+totalRead, fhOut.entry.FileSize)
	fhOut.dirtyMetadata = true
	return uint32(totalRead), OK
}

// gatedPages pauses the copy in LockForRead, between the two entryLock read
// locks, so that the upload completion lands in between.
type gatedPages struct {
	DirtyPages
	entered, proceed chan struct{}
	once             sync.Once
}

func (g *gatedPages) LockForRead(start, stop int64) {
	g.once.Do(func() { close(g.entered); <-g.proceed })
	g.DirtyPages.LockForRead(start, stop)
}

func newHandle(wfs *WFS, id FileHandleId, inode uint64, name string) (*FileHandle, *ChunkedDirtyPages) {
	fh := &FileHandle{fh: id, inode: inode, wfs: wfs, entry: &Entry{Name: name}}
	pages := &ChunkedDirtyPages{fh: fh, sealed: map[int64][]byte{}}
	fh.dirtyPages = &PageWriter{fh: fh, randomWriter: pages}
	wfs.fhmap.inode2fh[inode], wfs.fhmap.fh2inode[id] = fh, inode
	return fh, pages
}

func TestB113seaweedcopyrange(t *testing.T) {
	wfs := &WFS{fhmap: &FileHandleToInode{inode2fh: map[uint64]*FileHandle{}, fh2inode: map[FileHandleId]uint64{}}}
	src, srcPages := newHandle(wfs, 11, 1001, "app.log")
	dst, _ := newHandle(wfs, 12, 1002, "app.log.1")
	src.AddChunks([]*FileChunk{{FileId: "3,01", Offset: 0, Size: 4, data: []byte("abcd")}})
	gate := &gatedPages{DirtyPages: src.dirtyPages.randomWriter, entered: make(chan struct{}), proceed: make(chan struct{})}
	src.dirtyPages.randomWriter = gate

	copied := make(chan uint32)
	go func() {
		// cp on the mount: the kernel sends FUSE_COPY_FILE_RANGE.
		n, _ := wfs.CopyFileRange(nil, &CopyFileRangeIn{FhIn: uint64(src.fh), FhOut: uint64(dst.fh), Len: 4})
		copied <- n
	}()
	<-gate.entered

	uploaded := make(chan struct{})
	go func() {
		// The upload pipeline finishes a sealed chunk of the source file.
		srcPages.saveChunkedFileIntervalToStorage(bytes.NewReader([]byte("efgh")), 4, 4)
		close(uploaded)
	}()
	for waiting := true; waiting; { // until the uploader is done or queued on entryLock.Lock
		select {
		case <-uploaded:
			waiting = false
		default:
			if waiting = src.entryLock.TryRLock(); waiting {
				src.entryLock.RUnlock()
				time.Sleep(time.Millisecond)
			}
		}
	}
	close(gate.proceed)
	if n := <-copied; n != 4 {
		t.Fatalf("copied %d bytes, want 4", n)
	}
	<-uploaded
}
