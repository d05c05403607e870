// Package main models a trimmed-down version of etcd's mvcc watchable store
// (server/storage/mvcc/watchable_store.go): writers bump the store revision
// under the store lock and an optional progress callback is fired while the
// lock is still held. The callback only touches atomics and forwards the
// revision to a notifier goroutine over a buffered channel; the notifier
// never takes the store lock, so firing it under s.mu is safe.
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
)

type kv struct {
	key   string
	value string
	rev   int64
}

type watchableStore struct {
	mu         sync.Mutex
	rev        int64
	data       map[string]kv
	onProgress func(rev int64)
}

func newWatchableStore() *watchableStore {
	return &watchableStore{data: make(map[string]kv)}
}

// SetProgressNotify installs the callback; must be called before writers start.
func (s *watchableStore) SetProgressNotify(fn func(rev int64)) {
	s.mu.Lock()
	s.onProgress = fn
	s.mu.Unlock()
}

func (s *watchableStore) Put(key, value string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	s.data[key] = kv{key: key, value: value, rev: s.rev}
	if h := s.onProgress; h != nil {
		h(s.rev)
	}
	return s.rev
}

func (s *watchableStore) Range(key string) (kv, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	return v, ok
}

// progressNotifier is the consumer side of the callback. It is fed through a
// buffered channel and keeps its statistics in atomics.
type progressNotifier struct {
	latest   atomic.Int64
	notified atomic.Int64
	ch       chan int64
	done     chan struct{}
}

func newProgressNotifier(buf int) *progressNotifier {
	return &progressNotifier{ch: make(chan int64, buf), done: make(chan struct{})}
}

// observe is the callback handed to the store. It may run with s.mu held.
func (n *progressNotifier) observe(rev int64) {
	for {
		cur := n.latest.Load()
		if rev <= cur || n.latest.CompareAndSwap(cur, rev) {
			break
		}
	}
	n.ch <- rev
}

func (n *progressNotifier) run() {
	defer close(n.done)
	for rev := range n.ch {
		_ = rev
		n.notified.Add(1)
	}
}

func main() {
	store := newWatchableStore()
	notifier := newProgressNotifier(16)
	go notifier.run()
	store.SetProgressNotify(notifier.observe)

	const writers, perWriter = 4, 200
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				store.Put(fmt.Sprintf("/registry/pods/w%d-%d", id, i%10), fmt.Sprint(i))
			}
		}(w)
	}

	// A reader races with the writers, as a range request would.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 500; i++ {
			store.Range("/registry/pods/w0-1")
		}
	}()

	wg.Wait()
	close(notifier.ch)
	<-notifier.done

	fmt.Printf("latest rev=%d notified=%d\n", notifier.latest.Load(), notifier.notified.Load())
	if notifier.notified.Load() != writers*perWriter {
		panic("missing notifications")
	}
}
