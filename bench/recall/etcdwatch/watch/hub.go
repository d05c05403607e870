// Package watch is a small watch hub in the style of etcd's watchableStore
// and clientv3 watcher: context cancellation closes done under h.mu, while
// watchers select on done without the lock. Watch receives the start
// revision from revCh while holding h.mu; the revision goroutine never
// takes h.mu and the receive also selects on ctx.Done.
package watch

import (
	"context"
	"sync"
)

type Event struct {
	Key string
	Rev int64
}

type Watcher struct {
	StartRev int64
	Ch       chan Event
}

type Hub struct {
	ctx   context.Context
	revCh chan int64
	done  chan struct{}

	mu       sync.Mutex
	watchers []*Watcher
	closed   bool
	dropped  int
}

func NewHub(ctx context.Context) *Hub {
	h := &Hub{ctx: ctx, revCh: make(chan int64), done: make(chan struct{})}
	go h.revisions()
	go func() {
		<-ctx.Done()
		h.mu.Lock()
		if !h.closed {
			h.closed = true
			close(h.done)
		}
		h.mu.Unlock()
	}()
	return h
}

// revisions hands out monotonically increasing revisions; no locks.
func (h *Hub) revisions() {
	for rev := int64(1); ; rev++ {
		select {
		case h.revCh <- rev:
		case <-h.ctx.Done():
			return
		}
	}
}

// Done is closed once the hub's context is cancelled.
func (h *Hub) Done() <-chan struct{} { return h.done }

func (h *Hub) Watch() (*Watcher, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, context.Canceled
	}
	w := &Watcher{Ch: make(chan Event, 64)}
	select {
	case w.StartRev = <-h.revCh: // sender never takes h.mu
	case <-h.ctx.Done():
		return nil, h.ctx.Err()
	}
	h.watchers = append(h.watchers, w)
	return w, nil
}

func (h *Hub) Publish(key string, rev int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for _, w := range h.watchers {
		select {
		case w.Ch <- Event{Key: key, Rev: rev}:
		default:
			h.dropped++ // slow watcher; etcd would move it to the victim set
		}
	}
}
