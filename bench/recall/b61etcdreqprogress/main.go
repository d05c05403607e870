// Project: etcd-io/etcd clientv3 (v3 Go client), 3.4 development line, 2019.
// Files/functions: clientv3/watch.go: watcher.RequestProgress, Watch, Close,
// closeStream, newWatcherGrpcStream, watchGrpcStream.run/close;
// clientv3/client.go: Client (embeds Watcher), Client.Close.
// Issue: etcd-io/etcd#10863, fixed by etcd-io/etcd#10866
// "clientv3: Fixed a missing block bug".
//
// RequestProgress locks w.mu to find (or create) the gRPC watch stream for
// the caller's context. Once the watcher is closed w.streams is nil and it
// returns "no stream found for context" - the only one of its returns reached
// with w.mu still held. An application that requests progress notifications
// from a background loop while the client is being closed leaves the mutex
// locked after the first post-close call; the next Watch (or RequestProgress,
// or a stream goroutine's closeStream) blocks forever. The fix unlocks w.mu
// before that return.
package main

import (
	"context"
	"fmt"
	"sync"
)

type (
	WatchResponse   struct{ Revision int64 }
	WatchChan       <-chan WatchResponse
	ctxKeyType      struct{}
	progressRequest struct{}
)

type Watcher interface {
	Watch(ctx context.Context, key string) WatchChan
	RequestProgress(ctx context.Context) error
	Close() error
}

func streamKeyFromCtx(ctx context.Context) string {
	v, _ := ctx.Value(ctxKeyType{}).(string)
	return v
}

type watchGrpcStream struct {
	owner    *watcher
	ctx      context.Context
	cancel   context.CancelFunc
	ctxKey   string
	reqc     chan interface{}
	donec    chan struct{}
	closeErr error
}

type watcher struct {
	mu      sync.Mutex
	streams map[string]*watchGrpcStream
}

func (w *watcher) newWatcherGrpcStream(inctx context.Context) *watchGrpcStream {
	ctx, cancel := context.WithCancel(context.Background())
	wgs := &watchGrpcStream{owner: w, ctx: ctx, cancel: cancel, ctxKey: streamKeyFromCtx(inctx),
		reqc: make(chan interface{}), donec: make(chan struct{})}
	go wgs.run()
	return wgs
}

func (w *watchGrpcStream) run() {
	defer w.owner.closeStream(w)
	for {
		select {
		case <-w.reqc:
			// would be forwarded to the server on the gRPC watch stream
		case <-w.ctx.Done():
			return
		}
	}
}

func (w *watchGrpcStream) close() error {
	w.cancel()
	<-w.donec
	return w.closeErr
}

func (w *watcher) closeStream(wgs *watchGrpcStream) {
	w.mu.Lock()
	close(wgs.donec)
	wgs.cancel()
	if w.streams != nil {
		delete(w.streams, wgs.ctxKey)
	}
	w.mu.Unlock()
}

func (w *watcher) Watch(ctx context.Context, key string) WatchChan {
	w.mu.Lock()
	if w.streams == nil {
		// closed
		w.mu.Unlock()
		ch := make(chan WatchResponse)
		close(ch)
		return ch
	}
	ctxKey := streamKeyFromCtx(ctx)
	wgs := w.streams[ctxKey]
	if wgs == nil {
		wgs = w.newWatcherGrpcStream(ctx)
		w.streams[ctxKey] = wgs
	}
	w.mu.Unlock()
	return make(chan WatchResponse, 1)
}

func (w *watcher) Close() (err error) {
	w.mu.Lock()
	streams := w.streams
	w.streams = nil
	w.mu.Unlock()
	for _, wgs := range streams {
		if werr := wgs.close(); werr != nil {
			err = werr
		}
	}
	return err
}

// RequestProgress requests a progress notify response be sent in all watch channels.
func (w *watcher) RequestProgress(ctx context.Context) (err error) {
	ctxKey := streamKeyFromCtx(ctx)
	w.mu.Lock()
	if w.streams == nil {
		return fmt.Errorf("no stream found for context")
	}
	wgs := w.streams[ctxKey]
	if wgs == nil {
		wgs = w.newWatcherGrpcStream(ctx)
		w.streams[ctxKey] = wgs
	}
	donec, reqc := wgs.donec, wgs.reqc
	w.mu.Unlock()

	select {
	case reqc <- &progressRequest{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-donec:
		if wgs.closeErr != nil {
			return wgs.closeErr
		}
		return w.RequestProgress(ctx)
	}
}

type Client struct {
	Watcher
	ctx    context.Context
	cancel context.CancelFunc
}

func New() *Client {
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{Watcher: &watcher{streams: make(map[string]*watchGrpcStream)}, ctx: ctx, cancel: cancel}
}

func (c *Client) Close() error {
	c.cancel()
	return c.Watcher.Close()
}

// progressLoop is the application's keep-alive for a watch-based cache: it
// asks for a progress notification on every tick and reports the outcome.
func progressLoop(cli *Client, ctx context.Context, ticks <-chan struct{}, results chan<- error) {
	for range ticks {
		err := cli.RequestProgress(ctx)
		results <- err
		if err != nil {
			return
		}
	}
}

func main() {
	cli := New()
	ctx := context.WithValue(context.Background(), ctxKeyType{}, "cache")
	_ = cli.Watch(ctx, "/registry/")

	ticks, results := make(chan struct{}), make(chan error)
	go progressLoop(cli, ctx, ticks, results)
	ticks <- struct{}{}
	fmt.Println("progress requested:", <-results)

	cli.Close()
	ticks <- struct{}{}
	fmt.Println("progress loop stopped:", <-results)

	// The cache re-establishes its watch after the error.
	_, ok := <-cli.Watch(ctx, "/registry/")
	fmt.Println("watch channel open after close:", ok)
}
