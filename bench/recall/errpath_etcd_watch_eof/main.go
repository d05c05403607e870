// Modelled on etcd clientv3's watchGrpcStream: when the gRPC stream ends with
// io.EOF every substream is queued for resume under w.mu. Cancelling holds
// w.mu and finishes substreams with ctx.Err() (Canceled/DeadlineExceeded),
// which never matches io.EOF, so the locking branch is not reached.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

type watcherStream struct {
	id     int64
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
	done   chan struct{}
	err    error // written once before done is closed
}

type watchGrpcStream struct {
	mu       sync.Mutex
	subs     map[int64]*watcherStream
	resuming []*watcherStream
	resumes  int
}

// finishSub delivers a terminal error; only io.EOF takes w.mu.
func (w *watchGrpcStream) finishSub(ws *watcherStream, err error) {
	if errors.Is(err, io.EOF) {
		w.mu.Lock()
		w.resuming = append(w.resuming, ws)
		w.resumes++
		w.mu.Unlock()
		return
	}
	ws.once.Do(func() { ws.err = err; close(ws.done) })
}

// onRecvErr runs on the receive goroutine, without w.mu.
func (w *watchGrpcStream) onRecvErr(err error) {
	w.mu.Lock()
	subs := make([]*watcherStream, 0, len(w.subs))
	for _, ws := range w.subs {
		subs = append(subs, ws)
	}
	w.mu.Unlock()
	for _, ws := range subs {
		w.finishSub(ws, err)
	}
}

// reapCanceled holds w.mu and passes ctx.Err() (never io.EOF) to finishSub.
func (w *watchGrpcStream) reapCanceled() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for id, ws := range w.subs {
		if err := ws.ctx.Err(); err != nil {
			w.finishSub(ws, err)
			delete(w.subs, id)
			n++
		}
	}
	return n
}

func (w *watchGrpcStream) resumeAll() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(w.resuming)
	w.resuming = nil
	return n
}

func main() {
	w := &watchGrpcStream{subs: map[int64]*watcherStream{}}
	for i := int64(0); i < 20; i++ {
		timeout := time.Hour
		if i%3 == 0 {
			timeout = time.Millisecond
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		w.subs[i] = &watcherStream{id: i, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // receive loop: stream errors injected
		defer wg.Done()
		for i := 0; i < 20; i++ {
			if i%2 == 0 {
				w.onRecvErr(io.EOF)
			}
			w.resumeAll()
			time.Sleep(100 * time.Microsecond)
		}
	}()
	go func() { // users cancel their watches
		defer wg.Done()
		for i := int64(0); i < 20; i += 2 {
			w.mu.Lock()
			ws := w.subs[i]
			w.mu.Unlock()
			ws.cancel()
		}
	}()
	time.Sleep(2 * time.Millisecond)
	reaped := w.reapCanceled()
	wg.Wait()
	reaped += w.reapCanceled()
	w.onRecvErr(errors.New("rpc error: permission denied")) // terminal for the rest
	closed := 0
	for i := int64(0); i < 20; i++ { // every sub was either reaped or closed above
		w.mu.Lock()
		ws := w.subs[i]
		w.mu.Unlock()
		if ws != nil {
			<-ws.done
		}
		closed++
	}
	w.mu.Lock()
	fmt.Printf("reaped=%d resumes=%d closed=%d\n", reaped, w.resumes, closed)
	w.mu.Unlock()
}
