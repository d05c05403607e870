// Package freshleak: a lock of an object the function creates, left held
// on an error return, dies with the object (deflate_test's syncBuffer).
package freshleak

import (
	"errors"
	"sync"
)

type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{} }

func (b *syncBuffer) WriteMode() { b.mu.Lock() }
func (b *syncBuffer) ReadMode()  { b.mu.Unlock() }

func write(b *syncBuffer, p []byte) error {
	if len(p) == 0 {
		return errors.New("empty")
	}
	b.buf = append(b.buf, p...)
	return nil
}

// testSync returns on error with buf write-locked. Silent.
func testSync(p []byte) error {
	buf := newSyncBuffer()
	buf.WriteMode()
	if err := write(buf, p); err != nil {
		return err
	}
	buf.ReadMode()
	return nil
}

// A lock of an object the caller owns still leaks.
func keep(b *syncBuffer, p []byte) error {
	b.WriteMode()
	if err := write(b, p); err != nil {
		return err // want `syncBuffer.mu taken at freshleak.go:\d+ is still held on this return path`
	}
	b.ReadMode()
	return nil
}
