// etcd proxy/grpcproxy/watch_broadcast.go: watchBroadcast.delete holds
// wb.mu.Lock() and calls wb.empty(), which goes through wb.size() and takes
// wb.mu.RLock() on the same RWMutex. Every client watcher cancel through the
// gRPC proxy hangs. etcd-io/etcd#6937, fixed in etcd-io/etcd#6948
// ("Calling empty() in watchbroadcast methods was trying to lock the rwmutex
// when it was already held").
// Fixed twin: empty() reads len(receivers) directly and documents that the
// caller holds wb.mu; size() keeps its RLock for callers outside the lock.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

var watchersCoalescing atomic.Int64

type watcher struct {
	id      int64
	nextrev int64
	respc   chan string
}

func (w *watcher) send(ev string) {
	select {
	case w.respc <- ev:
	default: // slow client; proxy drops it
	}
}

// watchBroadcast broadcasts a server watcher to many client watchers.
type watchBroadcast struct {
	mu        sync.RWMutex // protects nextrev, receivers, responses
	nextrev   int64
	receivers map[*watcher]struct{}
	responses int
}

func (wb *watchBroadcast) bcast(rev int64, ev string) {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if wb.responses > 0 || wb.nextrev == 0 {
		wb.nextrev = rev + 1
	}
	wb.responses++
	for r := range wb.receivers {
		r.send(ev)
	}
}

// add puts a watcher into receiving a broadcast if its revision at least
// meets the broadcast revision. Returns true if added.
func (wb *watchBroadcast) add(w *watcher) bool {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if wb.nextrev > w.nextrev || (wb.nextrev == 0 && w.nextrev != 0) {
		return false
	}
	wb.receivers[w] = struct{}{}
	watchersCoalescing.Add(1)
	return true
}

func (wb *watchBroadcast) delete(w *watcher) {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if _, ok := wb.receivers[w]; !ok {
		panic("deleting missing watcher from broadcast")
	}
	delete(wb.receivers, w)
	if !wb.empty() {
		// do not dec the only left watcher for coalescing.
		watchersCoalescing.Add(-1)
	}
}

func (wb *watchBroadcast) size() int {
	wb.mu.RLock()
	defer wb.mu.RUnlock()
	return len(wb.receivers)
}

// empty reports whether there are no receivers; wb.mu must be held.
func (wb *watchBroadcast) empty() bool { return len(wb.receivers) == 0 }

func main() {
	wb := &watchBroadcast{receivers: make(map[*watcher]struct{})}

	// Client watch streams coalesced onto one server watcher by the proxy.
	var watchers []*watcher
	for i := 0; i < 4; i++ {
		w := &watcher{id: int64(i), respc: make(chan string, 16)}
		if wb.add(w) {
			watchers = append(watchers, w)
		}
	}

	// Server-side watch feeding the broadcast.
	go func() {
		for rev := int64(1); ; rev++ {
			wb.bcast(rev, fmt.Sprintf("PUT /registry/pods/p%d", rev))
		}
	}()

	// Each client reads an event and then cancels its watch.
	var wg sync.WaitGroup
	for _, w := range watchers {
		wg.Add(1)
		go func(w *watcher) {
			defer wg.Done()
			<-w.respc
			wb.delete(w)
		}(w)
	}
	wg.Wait()
	fmt.Println("all watchers cancelled; receivers =", wb.size(), "coalescing =", watchersCoalescing.Load())
}
