// Project: canonical/pebble (the Pebble service manager used by Juju/Rockcraft)
// Version: after PR #511 (October 2024)
// Files/functions: internals/servicelog/ringbuffer.go: RingBuffer.HeadIterator,
// RingBuffer.reverseLinePosition, RingBuffer.closed, RingBuffer.Close,
// RingBuffer.releaseIterators; internals/servicelog/iterator.go: iterator.
// Issue: canonical/pebble #508, fixed by PR #511 "fix: ring buffer deadlock".
//
// Fixed version: every path takes rwlock before iteratorMutex. HeadIterator
// holds rwlock.RLock for the whole operation and uses the unlocked helpers
// (reverseLinePositionLocked, closed), and Close takes iteratorMutex only
// after rwlock, so the two goroutines can no longer wait on each other.
package main

import (
	"sync"
	"time"
)

type RingPos int64

type iterator struct {
	rb        *RingBuffer
	index     RingPos
	nextChan  chan bool
	closeChan chan struct{}
}

type RingBuffer struct {
	rwlock      sync.RWMutex
	data        []byte
	readIndex   RingPos
	writeIndex  RingPos
	writeClosed bool

	iteratorMutex sync.RWMutex
	iteratorList  []*iterator
}

func NewRingBuffer(size int) *RingBuffer {
	return &RingBuffer{data: make([]byte, size)}
}

func (rb *RingBuffer) Write(p []byte) {
	rb.rwlock.Lock()
	defer rb.rwlock.Unlock()
	for _, b := range p {
		rb.data[int(rb.writeIndex)%len(rb.data)] = b
		rb.writeIndex++
	}
}

// Closed reports whether the writer side has been closed.
func (rb *RingBuffer) Closed() bool {
	rb.rwlock.RLock()
	defer rb.rwlock.RUnlock()
	return rb.closed()
}

func (rb *RingBuffer) closed() bool {
	return rb.writeClosed
}

// Close closes the writer and releases all iterators.
func (rb *RingBuffer) Close() error {
	rb.rwlock.Lock()
	defer rb.rwlock.Unlock()
	rb.iteratorMutex.Lock()
	defer rb.iteratorMutex.Unlock()
	if rb.writeClosed {
		return nil
	}
	rb.writeClosed = true
	time.Sleep(50 * time.Millisecond)
	rb.releaseIterators()
	return nil
}

func (rb *RingBuffer) releaseIterators() {
	for _, it := range rb.iteratorList {
		close(it.closeChan)
	}
	rb.iteratorList = nil
}

func (rb *RingBuffer) reverseLinePositionLocked(n int) RingPos {
	pos := rb.writeIndex
	for pos > rb.readIndex && n >= 0 {
		pos--
		if rb.data[int(pos)%len(rb.data)] == '\n' {
			n--
		}
	}
	return pos
}

// HeadIterator returns an iterator positioned lines lines before the end.
func (rb *RingBuffer) HeadIterator(lines int) *iterator {
	rb.rwlock.RLock()
	defer rb.rwlock.RUnlock()
	rb.iteratorMutex.Lock()
	defer rb.iteratorMutex.Unlock()
	firstLine := rb.reverseLinePositionLocked(lines)
	iter := &iterator{
		rb:        rb,
		index:     firstLine,
		nextChan:  make(chan bool, 1),
		closeChan: make(chan struct{}),
	}
	time.Sleep(50 * time.Millisecond)
	if rb.closed() {
		close(iter.closeChan)
	}
	rb.iteratorList = append(rb.iteratorList, iter)
	return iter
}

func main() {
	rb := NewRingBuffer(1024)
	rb.Write([]byte("started\nrunning\n"))

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // logs API handler
		defer wg.Done()
		it := rb.HeadIterator(1)
		_ = it
	}()
	go func() { // service manager: service exited
		defer wg.Done()
		time.Sleep(20 * time.Millisecond)
		rb.Close()
	}()
	wg.Wait()
}
