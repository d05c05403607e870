package inversion

import "sync"

// An entry appended to its poller's ready list while the poller's lock is
// held is collected, but the lock is the poller's, reached through the
// entry's pointer to it, not the entry's own: it stays held, and the
// callback that takes it under a file's event lock orders the two (an
// inotify queueing an event and waking its epoll waiters, while the
// epoll reads readiness under its lists lock).

type poller struct {
	listsMu sync.Mutex
	ready   []*pollItem
}

type pollItem struct {
	owner  *poller
	file   *watchFile
	queued bool
}

type waiter interface{ wake() }

// waitQueue runs its waiters' callbacks under its read lock.
type waitQueue struct {
	mu      sync.RWMutex
	entries []waiter
}

func (q *waitQueue) register(w waiter) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.entries = append(q.entries, w)
}

func (q *waitQueue) notify() {
	q.mu.RLock()
	defer q.mu.RUnlock()
	for _, e := range q.entries {
		e.wake()
	}
}

type watchFile struct {
	evMu sync.Mutex
	waitQueue
	pending int
}

func (it *pollItem) wake() {
	p := it.owner
	p.listsMu.Lock()
	if !it.queued {
		it.queued = true
		p.ready = append(p.ready, it)
		p.listsMu.Unlock()
		return
	}
	p.listsMu.Unlock()
}

func (f *watchFile) queueEvent() {
	f.evMu.Lock()
	defer f.evMu.Unlock()
	f.pending++
	f.notify()
}

func (f *watchFile) readiness() bool {
	f.evMu.Lock()
	defer f.evMu.Unlock()
	return f.pending > 0
}

func (p *poller) add(f *watchFile) {
	it := &pollItem{owner: p, file: f}
	f.register(it)
}

func (p *poller) readEvents() (n int) {
	p.listsMu.Lock()
	defer p.listsMu.Unlock()
	for _, it := range p.ready {
		if it.file.readiness() { // want `lock order inversion: watchFile.evMu then poller.listsMu in watchFile.queueEvent \(readylist.go:\d+ -> readylist.go:\d+ via waitQueue.notify -> pollItem.wake\) but poller.listsMu then watchFile.evMu in poller.readEvents \(readylist.go:\d+ -> readylist.go:\d+ via watchFile.readiness\); this acquisition closes 2 lock-order cycles \[lock-order\]`
			n++
		}
	}
	return n
}
