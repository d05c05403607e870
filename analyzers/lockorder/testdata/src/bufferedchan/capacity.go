package bufferedchan

import "sync"

// A capacity read from configuration may be 0: the queue is then
// unbuffered, and a send under the lock waits for a worker that takes
// the lock before it receives (gitea's worker pool with LENGTH=0).
type Config struct{ QueueLength int }

type Pool struct {
	mu      sync.Mutex
	queue   chan int
	workers int
}

func NewPool(cfg Config) *Pool {
	return &Pool{queue: make(chan int, cfg.QueueLength)}
}

func (p *Pool) Push(v int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.workers == 0 {
		go p.work()
	}
	p.queue <- v // want `Pool.mu \(taken at capacity.go:\d+\) is held across a channel send; the goroutine started by the go statement, which would unblock it, also takes Pool.mu \[blocking-held\]`
}

func (p *Pool) work() {
	p.mu.Lock()
	p.workers++
	p.mu.Unlock()
	for range p.queue {
	}
}

// A channel used as a semaphore, sized by a parameter, blocks when every
// slot is taken: acquiring a slot under the lock waits for a holder that
// needs the lock before it gives its slot back (a connection pool's max
// open connections).
type Slots struct{ c chan struct{} }

func NewSlots(n int) *Slots { return &Slots{c: make(chan struct{}, n)} }

type Stmts struct {
	mu    sync.Mutex
	slots *Slots
	cache map[string]int
}

func (s *Stmts) Prepare(q string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slots.c <- struct{}{} // want `Stmts.mu \(taken at capacity.go:\d+\) is held across a channel send; the goroutine started by the go statement, which would unblock it, also takes Stmts.mu \[blocking-held\]`
	defer func() { <-s.slots.c }()
	s.cache[q]++
	return s.cache[q]
}

func (s *Stmts) Tx() {
	go func() {
		s.slots.c <- struct{}{} // the transaction holds a slot...
		s.mu.Lock()             // ...and needs the lock before it gives it back
		s.cache["tx"]++
		s.mu.Unlock()
		<-s.slots.c
	}()
}

// Correct: one slot per sender (a capacity computed from len), so no
// send ever waits, whoever holds the lock.
type Scrape struct {
	mu      sync.Mutex
	targets []string
	done    chan string
	seen    int
}

func NewScrape(targets []string) *Scrape {
	return &Scrape{targets: targets, done: make(chan string, len(targets))}
}

func (s *Scrape) Run() {
	var wg sync.WaitGroup
	for _, t := range s.targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.report(t)
		}()
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for range s.targets {
		<-s.done
	}
}

func (s *Scrape) report(t string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen++
	s.done <- t
}

// Correct: the sender checks how full the queue is before it sends under
// the lock (etcd's too-many-requests check), so the send never waits,
// although the applier takes the lock after each receive.
type Server struct {
	mu       sync.Mutex
	applyc   chan int
	proposed int
	applied  int
}

func NewServer(cfg Config) *Server {
	s := &Server{applyc: make(chan int, cfg.QueueLength)}
	go s.apply()
	return s
}

func (s *Server) Put(v int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proposed-s.applied >= cap(s.applyc) {
		return false
	}
	s.proposed++
	s.applyc <- v
	return true
}

func (s *Server) apply() {
	for range s.applyc {
		s.mu.Lock()
		s.applied++
		s.mu.Unlock()
	}
}

// Correct: a capacity the package chose (a package var, a tunable default
// as database/sql's opener queue) counts as buffered like a constant.
var openerQueueSize = 1000

type DB struct {
	mu       sync.Mutex
	openerCh chan struct{}
	numOpen  int
}

func OpenDB() *DB {
	db := &DB{openerCh: make(chan struct{}, openerQueueSize)}
	go db.opener()
	return db
}

func (db *DB) maybeOpen() {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.numOpen++
	db.openerCh <- struct{}{}
}

func (db *DB) opener() {
	for range db.openerCh {
		db.mu.Lock()
		db.numOpen--
		db.mu.Unlock()
	}
}
