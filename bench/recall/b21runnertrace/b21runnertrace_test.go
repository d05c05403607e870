// Project: gitlab-runner (helpers/trace/buffer.go, job trace follower)
// Bug: the trace buffer's condition variable is built on the buffer's own
// RWMutex (sync.NewCond(b.lock.RLocker())). Finish() holds b.lock.Lock() and
// calls the helper wakeUpReaders(), which does b.cond.L.Lock() before
// Broadcast -- an RLock of the mutex the caller already write-holds -- so
// Finish() never returns and the follower waiting for more output never wakes.
// Fix: wakeUpReaders() expects the caller to hold b.lock and only broadcasts.

package b21runnertrace

import (
	"bytes"
	"hash"
	"hash/crc32"
	"sync"
	"testing"
	"time"
)

const defaultBytesLimit = 4 * 1024 * 1024

type Buffer struct {
	lock       sync.RWMutex
	cond       *sync.Cond
	data       bytes.Buffer
	bytesLimit int
	finished   bool
	checksum   hash.Hash32
	maskWords  [][]byte
}

func New() *Buffer {
	b := &Buffer{
		bytesLimit: defaultBytesLimit,
		checksum:   crc32.NewIEEE(),
	}
	b.cond = sync.NewCond(b.lock.RLocker())
	return b
}

func (b *Buffer) SetMasked(values []string) {
	b.lock.Lock()
	defer b.lock.Unlock()
	b.maskWords = b.maskWords[:0]
	for _, v := range values {
		b.maskWords = append(b.maskWords, []byte(v))
	}
}

func (b *Buffer) mask(p []byte) []byte {
	for _, w := range b.maskWords {
		p = bytes.ReplaceAll(p, w, []byte("[MASKED]"))
	}
	return p
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.lock.Lock()
	defer b.lock.Unlock()

	if b.finished {
		return 0, nil
	}
	masked := b.mask(p)
	if b.data.Len()+len(masked) > b.bytesLimit {
		masked = masked[:b.bytesLimit-b.data.Len()]
	}
	b.data.Write(masked)
	b.checksum.Write(masked)
	b.wakeUpReaders()
	return len(p), nil
}

// wakeUpReaders notifies followers blocked in WaitBytes.
func (b *Buffer) wakeUpReaders() {
	b.cond.L.Lock()
	b.cond.Broadcast()
	b.cond.L.Unlock()
}

// WaitBytes blocks until there is data past offset or the trace is finished.
func (b *Buffer) WaitBytes(offset int) ([]byte, bool) {
	b.cond.L.Lock()
	defer b.cond.L.Unlock()

	for b.data.Len() <= offset && !b.finished {
		b.cond.Wait()
	}
	out := append([]byte(nil), b.data.Bytes()[min(offset, b.data.Len()):]...)
	return out, b.finished
}

func (b *Buffer) Checksum() uint32 {
	b.lock.RLock()
	defer b.lock.RUnlock()
	return b.checksum.Sum32()
}

func (b *Buffer) Size() int {
	b.lock.RLock()
	defer b.lock.RUnlock()
	return b.data.Len()
}

func (b *Buffer) Finish() {
	b.lock.Lock()
	defer b.lock.Unlock()

	b.finished = true
	b.wakeUpReaders()
}

func TestFollowerWakesOnFinish(t *testing.T) {
	buf := New()
	buf.SetMasked([]string{"s3cr3t"})

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // log follower streaming the trace to the coordinator
		defer wg.Done()
		offset := 0
		for {
			chunk, finished := buf.WaitBytes(offset)
			offset += len(chunk)
			if finished {
				return
			}
		}
	}()
	go func() { // job executor finishing without further output
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		buf.Finish()
	}()
	wg.Wait()
}
