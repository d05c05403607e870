// Project: harness/drone (livelog streamer)
// Bug: streamer.Delete returned errStreamNotFound for an unknown step id without releasing the embedded mutex, so after the runner reported a step that never opened a log stream every later Create/Write/Tail on the server blocked forever.
// Fix: Delete releases the lock before every return (lookup and removal under the lock, Unlock, then handle !ok and close the stream).
package b25dronelivelog

import (
	"context"
	"errors"
	"sync"
	"testing"
)

const bufferSize = 5000

var errStreamNotFound = errors.New("stream: not found")

type Line struct {
	Number    int    `json:"pos"`
	Message   string `json:"out"`
	Timestamp int64  `json:"time"`
}

type LogStreamInfo struct {
	Streams map[int64]int `json:"streams"`
}

type LogStream interface {
	Create(ctx context.Context, id int64) error
	Delete(ctx context.Context, id int64) error
	Write(ctx context.Context, id int64, line *Line) error
	Tail(ctx context.Context, id int64) (<-chan *Line, <-chan error)
	Info(ctx context.Context) *LogStreamInfo
}

type subscriber struct {
	sync.Mutex
	handler chan *Line
	closec  chan struct{}
	closed  bool
}

func (s *subscriber) publish(line *Line) {
	select {
	case <-s.closec:
	case s.handler <- line:
	default:
	}
}

func (s *subscriber) close() {
	s.Lock()
	if !s.closed {
		close(s.closec)
		s.closed = true
	}
	s.Unlock()
}

type stream struct {
	sync.Mutex
	hist []*Line
	list map[*subscriber]struct{}
}

func newStream() *stream { return &stream{list: map[*subscriber]struct{}{}} }

func (s *stream) write(line *Line) error {
	s.Lock()
	s.hist = append(s.hist, line)
	for l := range s.list {
		l.publish(line)
	}
	if size := len(s.hist); size >= bufferSize {
		s.hist = s.hist[size-bufferSize:]
	}
	s.Unlock()
	return nil
}

func (s *stream) subscribe(ctx context.Context) (<-chan *Line, <-chan error) {
	sub := &subscriber{handler: make(chan *Line, bufferSize), closec: make(chan struct{})}
	err := make(chan error)
	s.Lock()
	for _, line := range s.hist {
		sub.publish(line)
	}
	s.list[sub] = struct{}{}
	s.Unlock()
	go func() {
		defer close(err)
		select {
		case <-sub.closec:
		case <-ctx.Done():
			sub.close()
		}
	}()
	return sub.handler, err
}

func (s *stream) close() error {
	s.Lock()
	defer s.Unlock()
	for sub := range s.list {
		delete(s.list, sub)
		sub.close()
	}
	return nil
}

type streamer struct {
	sync.Mutex
	streams map[int64]*stream
}

func New() LogStream { return &streamer{streams: make(map[int64]*stream)} }

func (s *streamer) Create(ctx context.Context, id int64) error {
	s.Lock()
	s.streams[id] = newStream()
	s.Unlock()
	return nil
}

func (s *streamer) Delete(ctx context.Context, id int64) error {
	s.Lock()
	stream, ok := s.streams[id]
	if !ok {
		return errStreamNotFound
	}
	delete(s.streams, id)
	s.Unlock()
	return stream.close()
}

func (s *streamer) Write(ctx context.Context, id int64, line *Line) error {
	s.Lock()
	stream, ok := s.streams[id]
	s.Unlock()
	if !ok {
		return errStreamNotFound
	}
	return stream.write(line)
}

func (s *streamer) Tail(ctx context.Context, id int64) (<-chan *Line, <-chan error) {
	s.Lock()
	stream, ok := s.streams[id]
	s.Unlock()
	if !ok {
		return nil, nil
	}
	return stream.subscribe(ctx)
}

func (s *streamer) Info(ctx context.Context) *LogStreamInfo {
	s.Lock()
	defer s.Unlock()
	info := &LogStreamInfo{Streams: map[int64]int{}}
	for id, stream := range s.streams {
		stream.Lock()
		info.Streams[id] = len(stream.list)
		stream.Unlock()
	}
	return info
}

func TestProbe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := New()
	if err := logs.Delete(ctx, 41); !errors.Is(err, errStreamNotFound) {
		t.Fatalf("Delete(41) = %v", err)
	}
	if err := logs.Create(ctx, 42); err != nil {
		t.Fatal(err)
	}
	lines, _ := logs.Tail(ctx, 42)
	if err := logs.Write(ctx, 42, &Line{Number: 0, Message: "+ go build"}); err != nil {
		t.Fatal(err)
	}
	if got := <-lines; got.Message != "+ go build" {
		t.Fatalf("got %q", got.Message)
	}
	if err := logs.Delete(ctx, 42); err != nil {
		t.Fatal(err)
	}
}
