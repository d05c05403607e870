// Modelled on grpc-go's http2 transport: streams are registered under the
// transport mutex and their frames are pushed onto a bounded control queue
// whose size comes from the server config. The loopy writer goroutine is the
// only consumer of the queue and it never takes the transport mutex, so a
// send that blocks while t.mu is held is always eventually unblocked.
package main

import (
	"fmt"
	"sync"
)

type ServerConfig struct {
	WriteQueueSize int
	MaxStreams     int
}

type dataFrame struct {
	streamID uint32
	payload  string
}

type http2Server struct {
	mu           sync.Mutex
	nextStreamID uint32
	activeStream map[uint32]bool

	controlBuf chan *dataFrame // bounded by cfg.WriteQueueSize
	written    []string        // owned by loopy only
	loopyDone  chan struct{}
}

func newHTTP2Server(cfg ServerConfig) *http2Server {
	t := &http2Server{
		nextStreamID: 1,
		activeStream: make(map[uint32]bool),
		controlBuf:   make(chan *dataFrame, cfg.WriteQueueSize),
		loopyDone:    make(chan struct{}),
	}
	go t.loopyWriter()
	return t
}

// loopyWriter drains the control buffer. It touches only its own state and
// never acquires t.mu.
func (t *http2Server) loopyWriter() {
	defer close(t.loopyDone)
	for f := range t.controlBuf {
		t.written = append(t.written, fmt.Sprintf("stream=%d %s", f.streamID, f.payload))
	}
}

// operateHeaders allocates a stream ID and enqueues the header frame while
// holding t.mu so that frames are queued in stream-ID order.
func (t *http2Server) operateHeaders(method string) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	id := t.nextStreamID
	t.nextStreamID += 2
	t.activeStream[id] = true
	t.controlBuf <- &dataFrame{streamID: id, payload: "HEADERS " + method}
	return id
}

func (t *http2Server) write(id uint32, data string) {
	t.controlBuf <- &dataFrame{streamID: id, payload: "DATA " + data}
}

func (t *http2Server) closeStream(id uint32) {
	t.mu.Lock()
	delete(t.activeStream, id)
	t.controlBuf <- &dataFrame{streamID: id, payload: "RST_STREAM"}
	t.mu.Unlock()
}

func (t *http2Server) Close() []string {
	t.mu.Lock()
	n := len(t.activeStream)
	t.mu.Unlock()
	if n != 0 {
		panic("streams still active")
	}
	close(t.controlBuf)
	<-t.loopyDone
	return t.written
}

func main() {
	cfg := ServerConfig{WriteQueueSize: 2, MaxStreams: 16}
	t := newHTTP2Server(cfg)

	var wg sync.WaitGroup
	for i := 0; i < cfg.MaxStreams; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := t.operateHeaders(fmt.Sprintf("/svc/Method%d", i))
			for j := 0; j < 3; j++ {
				t.write(id, fmt.Sprintf("chunk-%d", j))
			}
			t.closeStream(id)
		}(i)
	}
	wg.Wait()
	out := t.Close()
	fmt.Println("frames written:", len(out))
}
