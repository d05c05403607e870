// pion/sctp: reading a stream waited on the stream's sync.Cond while the
// caller still held Association.lock. The association's read loop
// (handleData) needs Association.lock to look the stream up before it can
// append the chunk and Signal, so the reader slept forever with the
// association lock held. Fixed by releasing Association.lock before waiting.
package main

import (
	"fmt"
	"sync"
)

// stream is the per-stream state kept in the association's map; each has its
// own lock and read notifier.
type stream struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  [][]byte
}

// Association is one SCTP association.
type Association struct {
	lock    sync.Mutex
	streams map[uint16]*stream
}

func newAssociation() *Association {
	return &Association{streams: make(map[uint16]*stream)}
}

// getOrCreateStreamLocked requires a.lock.
func (a *Association) getOrCreateStreamLocked(id uint16) *stream {
	s, ok := a.streams[id]
	if !ok {
		s = &stream{}
		s.cond = sync.NewCond(&s.mu)
		a.streams[id] = s
	}
	return s
}

// ReadFrom blocks until a chunk is available on stream id.
func (a *Association) ReadFrom(id uint16) []byte {
	a.lock.Lock()
	defer a.lock.Unlock()
	s := a.getOrCreateStreamLocked(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.buf) == 0 {
		s.cond.Wait()
	}
	b := s.buf[0]
	s.buf = s.buf[1:]
	return b
}

// handleData is called by the association read loop for each DATA chunk.
func (a *Association) handleData(id uint16, data []byte) {
	a.lock.Lock()
	s := a.getOrCreateStreamLocked(id)
	a.lock.Unlock()

	s.mu.Lock()
	s.buf = append(s.buf, data)
	s.mu.Unlock()
	s.cond.Signal()
}

func main() {
	a := newAssociation()
	const n = 100

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // readLoop
		defer wg.Done()
		for i := 0; i < n; i++ {
			a.handleData(1, []byte{byte(i)})
		}
	}()
	go func() { // application (datachannel) reader
		defer wg.Done()
		for i := 0; i < n; i++ {
			_ = a.ReadFrom(1)
		}
	}()
	wg.Wait()
	fmt.Println("read", n, "chunks")
}
