// FIXED twin (PR #6873: unlock wbs.mu before waiting on donec).
// Project: etcd-io/etcd (proxy/grpcproxy/watch_broadcasts.go, watch_broadcast.go)
// Issue: etcd-io/etcd PR #6873 "grpcproxy: fix deadlock on watch broadcasts
// stop" (Nov 2016): "Holding the WatchBroadcasts lock and waiting on donec was
// causing a deadlock with the coalesce loop. Was causing TestV3WatchSyncCancel
// to hang."
//
// watchBroadcasts runs a coalesce goroutine that ranges over updatec and, for
// each watchBroadcast that reported progress through its update callback
// (wbs.update, handed to newWatchBroadcast as a func value), locks wbs.mu in
// coalesce (line 168). watchBroadcasts.stop took wbs.mu, stopped every
// broadcast, closed updatec and then waited for the coalesce goroutine to
// exit (<-wbs.donec, line 218) while still holding wbs.mu. A response that
// reaches a broadcast while it is being stopped posts one last update; the
// coalesce goroutine then blocks on wbs.mu and never closes donec, and stop
// never returns.
package main

import (
	"context"
	"fmt"
	"sync"
)

// ---- clientv3 (trimmed) ----

type ResponseHeader struct{ Revision int64 }

type WatchResponse struct{ Header ResponseHeader }

type WatchChan <-chan WatchResponse

type Watcher interface {
	Watch(ctx context.Context, key string, rev int64) WatchChan
}

// ---- proxy/grpcproxy ----

type watchRange struct{ key, end string }

type watcher struct {
	wr      watchRange
	id      int64
	nextrev int64
}

func (w *watcher) send(wr WatchResponse) {}

type watchProxy struct {
	cw  Watcher
	ctx context.Context
}

// watchBroadcast broadcasts a server watcher to many client watchers.
type watchBroadcast struct {
	// cancel stops the underlying etcd server watcher and closes ch.
	cancel context.CancelFunc
	donec  chan struct{}

	// mu protects rev and receivers.
	mu sync.RWMutex
	// nextrev is the minimum expected next revision of the watcher on ch.
	nextrev int64
	// receivers contains all the client-side watchers to serve.
	receivers map[*watcher]struct{}
	// responses counts the number of responses
	responses int
}

func newWatchBroadcast(wp *watchProxy, w *watcher, update func(*watchBroadcast)) *watchBroadcast {
	cctx, cancel := context.WithCancel(wp.ctx)
	wb := &watchBroadcast{
		cancel:    cancel,
		nextrev:   w.nextrev,
		receivers: make(map[*watcher]struct{}),
		donec:     make(chan struct{}),
	}
	wb.add(w)
	go func() {
		defer close(wb.donec)
		// loop because leader loss will close channel
		for cctx.Err() == nil {
			wch := wp.cw.Watch(cctx, w.wr.key, wb.nextrev)
			for wr := range wch {
				wb.bcast(wr)
				update(wb)
			}
		}
	}()
	return wb
}

func (wb *watchBroadcast) bcast(wr WatchResponse) {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	// watchers start on the given revision, if any; ignore header rev on create
	if wb.responses > 0 || wb.nextrev == 0 {
		wb.nextrev = wr.Header.Revision + 1
	}
	wb.responses++
	for r := range wb.receivers {
		r.send(wr)
	}
}

// add puts a watcher into receiving a broadcast if its revision at least
// meets the broadcast revision. Returns true if added.
func (wb *watchBroadcast) add(w *watcher) bool {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if wb.nextrev > w.nextrev || (wb.nextrev == 0 && w.nextrev != 0) {
		// wb is too far ahead, w will miss events
		// or wb is being established with a current watcher
		return false
	}
	wb.receivers[w] = struct{}{}
	return true
}

func (wb *watchBroadcast) size() int {
	wb.mu.RLock()
	defer wb.mu.RUnlock()
	return len(wb.receivers)
}

func (wb *watchBroadcast) empty() bool { return wb.size() == 0 }

func (wb *watchBroadcast) stop() {
	wb.cancel()
	<-wb.donec
}

type watchBroadcasts struct {
	wp *watchProxy

	// mu protects bcasts and watchers from the coalesce loop.
	mu       sync.Mutex
	bcasts   map[*watchBroadcast]struct{}
	watchers map[*watcher]*watchBroadcast

	updatec chan *watchBroadcast
	donec   chan struct{}
}

// maxCoalesceRecievers prevents a popular watchBroadcast from being coalseced.
const maxCoalesceReceivers = 5

func newWatchBroadcasts(wp *watchProxy) *watchBroadcasts {
	wbs := &watchBroadcasts{
		wp:       wp,
		bcasts:   make(map[*watchBroadcast]struct{}),
		watchers: make(map[*watcher]*watchBroadcast),
		updatec:  make(chan *watchBroadcast, 1),
		donec:    make(chan struct{}),
	}
	go func() {
		defer close(wbs.donec)
		for wb := range wbs.updatec {
			wbs.coalesce(wb)
		}
	}()
	return wbs
}

func (wbs *watchBroadcasts) coalesce(wb *watchBroadcast) {
	if wb.size() >= maxCoalesceReceivers {
		return
	}
	wbs.mu.Lock()
	for wbswb := range wbs.bcasts {
		if wbswb == wb {
			continue
		}
		wbswb.mu.Lock()
		// 1. check if wbswb is behind wb so it won't skip any events in wb
		// 2. ensure wbswb started; nextrev == 0 may mean wbswb is waiting
		// for a current watcher and expects a create event from the server.
		if wb.nextrev >= wbswb.nextrev && wbswb.responses > 0 {
			for w := range wb.receivers {
				wbswb.receivers[w] = struct{}{}
				wbs.watchers[w] = wbswb
			}
			wb.receivers = nil
		}
		wbswb.mu.Unlock()
		if wb.empty() {
			delete(wbs.bcasts, wb)
			wb.stop()
			break
		}
	}
	wbs.mu.Unlock()
}

func (wbs *watchBroadcasts) add(w *watcher) {
	wbs.mu.Lock()
	defer wbs.mu.Unlock()
	// find fitting bcast
	for wb := range wbs.bcasts {
		if wb.add(w) {
			wbs.watchers[w] = wb
			return
		}
	}
	// no fit; create a bcast
	wb := newWatchBroadcast(wbs.wp, w, wbs.update)
	wbs.watchers[w] = wb
	wbs.bcasts[wb] = struct{}{}
}

func (wbs *watchBroadcasts) stop() {
	wbs.mu.Lock()
	for wb := range wbs.bcasts {
		wb.stop()
	}
	wbs.bcasts = nil
	close(wbs.updatec)
	wbs.mu.Unlock()
	<-wbs.donec
}

func (wbs *watchBroadcasts) update(wb *watchBroadcast) {
	select {
	case wbs.updatec <- wb:
	default:
	}
}

// lateWatcher is the etcd client watch stream as seen by the proxy: one
// response was already in flight when the watch got canceled, so it is
// delivered before the channel closes.
type lateWatcher struct {
	once    sync.Once
	watched chan struct{} // closed once the proxy's watch is established
}

func (lw *lateWatcher) Watch(ctx context.Context, key string, rev int64) WatchChan {
	ch := make(chan WatchResponse)
	lw.once.Do(func() { close(lw.watched) })
	go func() {
		defer close(ch)
		<-ctx.Done()
		ch <- WatchResponse{Header: ResponseHeader{Revision: 42}}
	}()
	return ch
}

func main() {
	lw := &lateWatcher{watched: make(chan struct{})}
	wp := &watchProxy{cw: lw, ctx: context.Background()}
	wbs := newWatchBroadcasts(wp)
	wbs.add(&watcher{wr: watchRange{key: "foo"}, id: 1})
	<-lw.watched

	// The client cancels its last watch on the range; the proxy stops the
	// broadcasts of the range.
	wbs.stop()
	fmt.Println("stopped")
}
