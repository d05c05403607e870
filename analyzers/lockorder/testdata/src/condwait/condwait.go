// Package condwait: sync.Cond.Wait blocks until another goroutine signals;
// it releases only its own lock. A lock held across it, directly or inside
// a callee, blocks the signalling goroutine if that goroutine takes the
// lock; for a read lock, if anyone write-locks it (a queued writer makes
// every later RLock wait).
package condwait

import "sync"

// Queue is a blocking queue on a Cond over its own mutex.
type Queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
}

func NewQueue() *Queue {
	q := &Queue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// pop waits on the Cond while holding only the Cond's own lock. Silent.
func (q *Queue) pop() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	v := q.items[0]
	q.items = q.items[1:]
	return v
}

func (q *Queue) push(v int) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.cond.Signal()
}

// Server's worker reads the config under a read lock while it waits for
// work; the producer read-locks the config before queueing; reload
// write-locks it.
type Server struct {
	mu    sync.RWMutex
	conf  map[string]int
	queue *Queue
}

func (s *Server) Start() {
	go s.work()
	go s.produce()
}

func (s *Server) work() {
	for {
		s.mu.RLock()
		v := s.queue.pop() // want `Server.mu \(taken at condwait.go:\d+\) is held across a Cond.Wait \(in Queue.pop at condwait.go:\d+\); the goroutine started by the go statement, which would unblock it, also takes Server.mu \(read-locked, but Server.Reload write-locks it: a waiting writer makes every later RLock wait\) \[blocking-held\]`
		s.conf["last"] = v
		s.mu.RUnlock()
	}
}

func (s *Server) produce() {
	for i := 0; ; i++ {
		s.mu.RLock()
		n := s.conf["step"]
		s.mu.RUnlock()
		s.queue.push(i * n)
	}
}

func (s *Server) Reload(conf map[string]int) {
	s.mu.Lock()
	s.conf = conf
	s.mu.Unlock()
}

// handle waits for work before it takes the read lock. Silent.
func (s *Server) handle() int {
	v := s.queue.pop()
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.conf["base"] + v
}

// Batch waits on its Cond directly while holding another lock that the
// signalling goroutine takes.
type Batch struct {
	stateMu sync.Mutex
	mu      sync.Mutex
	cond    *sync.Cond
	ready   bool
	n       int
}

func NewBatch() *Batch {
	b := &Batch{}
	b.cond = sync.NewCond(&b.mu)
	go b.fill()
	return b
}

func (b *Batch) fill() {
	b.stateMu.Lock()
	b.n++
	b.stateMu.Unlock()
	b.mu.Lock()
	b.ready = true
	b.mu.Unlock()
	b.cond.Broadcast()
}

func (b *Batch) wait() int {
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	b.mu.Lock()
	for !b.ready {
		b.cond.Wait() // want `Batch.stateMu \(taken at condwait.go:\d+\) is held across a Cond.Wait; the goroutine started by the go statement, which would unblock it, also takes Batch.stateMu \[blocking-held\]`
	}
	b.mu.Unlock()
	return b.n
}

// waitOwn holds only the Cond's lock across Wait. Silent.
func (b *Batch) waitOwn() bool {
	b.mu.Lock()
	for !b.ready {
		b.cond.Wait()
	}
	b.mu.Unlock()
	return true
}

// Mailbox is exported: Put may be called by any goroutine of an importer,
// one that takes no lock of Hub's, so Hub's wait is not a deadlock the
// package can be sure of. Silent.
type Mailbox struct {
	mu   sync.Mutex
	cond *sync.Cond
	msgs []string
}

func NewMailbox() *Mailbox {
	m := &Mailbox{}
	m.cond = sync.NewCond(&m.mu)
	return m
}

func (m *Mailbox) Get() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.msgs) == 0 {
		m.cond.Wait()
	}
	s := m.msgs[0]
	m.msgs = m.msgs[1:]
	return s
}

func (m *Mailbox) Put(s string) {
	m.mu.Lock()
	m.msgs = append(m.msgs, s)
	m.mu.Unlock()
	m.cond.Signal()
}

type Hub struct {
	mu   sync.RWMutex
	name string
	box  *Mailbox
}

func (h *Hub) Start() {
	go h.read()
	go h.write()
}

func (h *Hub) read() {
	for {
		h.mu.RLock()
		_ = h.name + h.box.Get()
		h.mu.RUnlock()
	}
}

func (h *Hub) write() {
	for {
		h.mu.RLock()
		n := h.name
		h.mu.RUnlock()
		h.box.Put(n)
	}
}

func (h *Hub) Rename(n string) {
	h.mu.Lock()
	h.name = n
	h.mu.Unlock()
}

var _ = []any{(*Batch).wait, (*Batch).waitOwn, (*Server).handle}

// Inbox's Cond has a mutex of its own: the Cond's L is the only lock its
// Wait releases.
type Inbox struct {
	cond  *sync.Cond
	mu    sync.Mutex
	items []string
}

func NewInbox() *Inbox {
	in := &Inbox{cond: sync.NewCond(&sync.Mutex{})}
	go in.feed()
	return in
}

func (in *Inbox) feed() {
	in.mu.Lock()
	in.items = append(in.items, "x")
	in.mu.Unlock()
	in.cond.L.Lock()
	in.cond.Signal()
	in.cond.L.Unlock()
}

// next holds Inbox.mu across the wait; feed needs it before it signals.
func (in *Inbox) next() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.cond.L.Lock()
	for len(in.items) == 0 {
		in.cond.Wait() // want `Inbox.mu \(taken at condwait.go:\d+\) is held across a Cond.Wait; the goroutine started by the go statement, which would unblock it, also takes Inbox.mu \[blocking-held\]`
	}
	in.cond.L.Unlock()
	return in.items[0]
}

// wait holds only the Cond's own lock. Silent.
func (in *Inbox) wait() {
	in.cond.L.Lock()
	for len(in.items) == 0 {
		in.cond.Wait()
	}
	in.cond.L.Unlock()
}

var _ = []any{(*Inbox).next, (*Inbox).wait}

// Tracker makes one mutex and keeps it both as its lock and as its Cond's
// L: the Wait releases Tracker.lock. Silent.
type Tracker struct {
	lock  *sync.RWMutex
	cond  *sync.Cond
	limit int
	n     int
}

func NewTracker(limit int) *Tracker {
	lock := new(sync.RWMutex)
	t := &Tracker{lock: lock, cond: sync.NewCond(lock), limit: limit}
	go t.release()
	return t
}

func (t *Tracker) release() {
	t.lock.Lock()
	t.n--
	t.lock.Unlock()
	t.cond.Broadcast()
}

func (t *Tracker) wait() {
	t.lock.Lock()
	defer t.lock.Unlock()
	for t.n >= t.limit {
		t.cond.Wait()
	}
	t.n++
}

var _ = (*Tracker).wait
