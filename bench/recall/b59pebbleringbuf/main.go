// Project: canonical/pebble (the Pebble service manager used by Juju/Rockcraft)
// Version: before October 2024 (pre-fix of issue #508)
// Files/functions: internals/servicelog/ringbuffer.go: RingBuffer.HeadIterator,
// RingBuffer.reverseLinePosition, RingBuffer.Closed, RingBuffer.Close,
// RingBuffer.releaseIterators; internals/servicelog/iterator.go: iterator.
// Issue: canonical/pebble #508, fixed by PR #511 "fix: ring buffer deadlock".
//
// The service log ring buffer has two locks: rwlock protects the buffer
// positions and the closed flag, iteratorMutex protects the list of live
// iterators. HeadIterator (called by the /v1/logs API handler while a service
// is being stopped) first computes the start position under rwlock.RLock,
// then takes iteratorMutex to register the new iterator, and while still
// holding iteratorMutex calls rb.Closed(), which takes rwlock.RLock again.
// Close (called by the service manager when the service exits) takes
// rwlock.Lock and, while holding it, calls releaseIterators, which takes
// iteratorMutex. The two paths acquire the locks in opposite order
// (iteratorMutex -> rwlock versus rwlock -> iteratorMutex) and deadlock.
// The fix makes every path take rwlock first and iteratorMutex second:
// HeadIterator holds rwlock.RLock across the whole operation and uses an
// unlocked closed() helper, and Close takes iteratorMutex after rwlock.
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
	return rb.writeClosed
}

// Close closes the writer and releases all iterators.
func (rb *RingBuffer) Close() error {
	rb.rwlock.Lock()
	defer rb.rwlock.Unlock()
	if rb.writeClosed {
		return nil
	}
	rb.writeClosed = true
	// Let the log API goroutine register its iterator meanwhile.
	time.Sleep(50 * time.Millisecond)
	rb.releaseIterators()
	return nil
}

func (rb *RingBuffer) releaseIterators() {
	rb.iteratorMutex.Lock()
	defer rb.iteratorMutex.Unlock()
	for _, it := range rb.iteratorList {
		close(it.closeChan)
	}
	rb.iteratorList = nil
}

func (rb *RingBuffer) reverseLinePosition(n int) RingPos {
	rb.rwlock.RLock()
	defer rb.rwlock.RUnlock()
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
	firstLine := rb.reverseLinePosition(lines)
	rb.iteratorMutex.Lock()
	defer rb.iteratorMutex.Unlock()
	iter := &iterator{
		rb:        rb,
		index:     firstLine,
		nextChan:  make(chan bool, 1),
		closeChan: make(chan struct{}),
	}
	// The service manager calls Close at this point.
	time.Sleep(50 * time.Millisecond)
	if rb.Closed() {
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
