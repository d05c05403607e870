// FIXED TWIN of ../etcdwatch: same program with the fix applied (see "FIX:" comments).
//
// Project: etcd (server/mvcc: watchable_store.go, watcher.go).
//
// Bug (approximate): watchableStore.notify() runs with s.mu held (called from
// watchableStoreTxnWrite.End) and delivered events with a *blocking* send on the
// watch stream's shared channel. The goroutine that drains that channel (the
// serverWatchStream loop) was at the same moment handling a cancel request:
// watchStream.Cancel -> watchableStore.cancelWatcher, which needs s.mu. The writer
// waits for the reader to drain the channel, the reader waits for s.mu.
// Fix (what etcd does): watcher.send is a non-blocking select; a watcher whose
// channel is full is moved to s.victims and retried by syncVictimsLoop.
package etcdwatchnotify_fixed

import (
	"sync"
	"testing"
	"time"
)

type WatchID int64

type Event struct {
	Key, Value string
	ModRev     int64
}

type WatchResponse struct {
	WatchID  WatchID
	Events   []Event
	Revision int64
}

type watcher struct {
	key    string
	minRev int64
	id     WatchID
	victim bool
	ch     chan<- WatchResponse
}

func (w *watcher) send(wr WatchResponse) bool {
	// FIX: never block while s.mu is held; a full channel makes the watcher a victim.
	select {
	case w.ch <- wr:
		return true
	default:
		return false
	}
}

type watcherGroup map[*watcher]struct{}

type watcherBatch map[*watcher][]Event

// backend stands in for mvcc's store + bolt backend.
type backend struct {
	kv  map[string]string
	rev int64
}

func (b *backend) commit() {
	time.Sleep(30 * time.Millisecond) // batch tx commit / fsync
}

type watchableStore struct {
	mu      sync.RWMutex
	b       *backend
	victims []watcherBatch
	synced  watcherGroup
	nextID  WatchID
}

func newWatchableStore() *watchableStore {
	return &watchableStore{b: &backend{kv: map[string]string{}}, synced: watcherGroup{}}
}

func (s *watchableStore) watch(key string, ch chan<- WatchResponse) (*watcher, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	w := &watcher{key: key, minRev: s.b.rev + 1, id: s.nextID, ch: ch}
	s.synced[w] = struct{}{}
	return w, func() { s.cancelWatcher(w) }
}

func (s *watchableStore) cancelWatcher(w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.synced, w)
	for _, wb := range s.victims {
		delete(wb, w)
	}
}

// notify is called with s.mu held.
func (s *watchableStore) notify(rev int64, evs []Event) {
	var victim watcherBatch
	for w := range s.synced {
		var mine []Event
		for _, ev := range evs {
			if ev.Key == w.key {
				mine = append(mine, ev)
			}
		}
		if len(mine) == 0 {
			continue
		}
		if w.send(WatchResponse{WatchID: w.id, Events: mine, Revision: rev}) {
			w.minRev = rev + 1
		} else {
			if victim == nil {
				victim = make(watcherBatch)
			}
			w.victim = true
			victim[w] = mine
			delete(s.synced, w)
		}
	}
	if victim != nil {
		s.victims = append(s.victims, victim)
	}
}

// watchableStoreTxnWrite mirrors mvcc's write txn wrapper.
type watchableStoreTxnWrite struct {
	s       *watchableStore
	changes []Event
}

func (s *watchableStore) Write() *watchableStoreTxnWrite { return &watchableStoreTxnWrite{s: s} }

func (tw *watchableStoreTxnWrite) Put(key, value string) {
	tw.changes = append(tw.changes, Event{Key: key, Value: value})
}

func (tw *watchableStoreTxnWrite) End() {
	tw.s.mu.Lock()
	defer tw.s.mu.Unlock()
	tw.s.b.rev++
	rev := tw.s.b.rev
	for i := range tw.changes {
		tw.changes[i].ModRev = rev
		tw.s.b.kv[tw.changes[i].Key] = tw.changes[i].Value
	}
	tw.s.b.commit()
	tw.s.notify(rev, tw.changes)
}

// watchStream multiplexes many watchers on one channel, like mvcc.watchStream.
type watchStream struct {
	mu        sync.Mutex
	watchable *watchableStore
	ch        chan WatchResponse
	cancels   map[WatchID]func()
}

func (s *watchableStore) NewWatchStream() *watchStream {
	return &watchStream{watchable: s, ch: make(chan WatchResponse, 1), cancels: map[WatchID]func(){}}
}

func (ws *watchStream) Watch(key string) WatchID {
	w, c := ws.watchable.watch(key, ws.ch)
	ws.mu.Lock()
	ws.cancels[w.id] = c
	ws.mu.Unlock()
	return w.id
}

func (ws *watchStream) Cancel(id WatchID) {
	ws.mu.Lock()
	cancel, ok := ws.cancels[id]
	delete(ws.cancels, id)
	ws.mu.Unlock()
	if ok {
		cancel()
	}
}

func (ws *watchStream) Chan() <-chan WatchResponse { return ws.ch }

// serverWatchStream is the single goroutine that serves both directions of the gRPC stream in this model.
func serveWatchStream(ws *watchStream, cancelReqs <-chan WatchID, stop <-chan struct{}, got *[]WatchResponse) {
	for {
		select {
		case wr := <-ws.Chan():
			*got = append(*got, wr)
		case id := <-cancelReqs:
			ws.Cancel(id)
		case <-stop:
			return
		}
	}
}

func TestCancelWhileNotifying(t *testing.T) {
	s := newWatchableStore()
	ws := s.NewWatchStream()
	id1 := ws.Watch("foo")
	ws.Watch("foo") // second watcher on the same stream/channel

	cancelReqs := make(chan WatchID)
	stop := make(chan struct{})
	var got []WatchResponse
	var streamWG, writerWG sync.WaitGroup
	streamWG.Add(1)
	go func() {
		defer streamWG.Done()
		serveWatchStream(ws, cancelReqs, stop, &got)
	}()
	writerWG.Add(1)
	go func() { // a client Put
		defer writerWG.Done()
		txn := s.Write()
		txn.Put("foo", "bar")
		txn.End()
	}()

	time.Sleep(5 * time.Millisecond) // writer is committing with s.mu held
	cancelReqs <- id1                // client cancels the first watch

	writerWG.Wait()
	close(stop)
	streamWG.Wait()
	t.Logf("received %d responses", len(got))
}
