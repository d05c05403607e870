package blocking

import "sync"

// A goroutine that runs the jobs queued for it takes what they take: a
// FIFO scheduler stopped under the lock its running job wants waits for
// ever (etcd's compaction job, scheduled through the Scheduler interface,
// retaking the store's lock while Restore holds it and stops the
// scheduler).

type Job func()

type Scheduler interface {
	Schedule(j Job)
	Stop()
}

type fifo struct {
	mu       sync.Mutex
	pendings []Job
	resume   chan struct{}
	stopc    chan struct{}
	donec    chan struct{}
}

func NewFIFO() Scheduler {
	f := &fifo{resume: make(chan struct{}, 1), stopc: make(chan struct{}), donec: make(chan struct{})}
	go f.run()
	return f
}

func (f *fifo) Schedule(j Job) {
	f.mu.Lock()
	f.pendings = append(f.pendings, j)
	f.mu.Unlock()
	select {
	case f.resume <- struct{}{}:
	default:
	}
}

func (f *fifo) Stop() {
	close(f.stopc)
	<-f.donec
}

func (f *fifo) run() {
	defer close(f.donec)
	for {
		var todo Job
		f.mu.Lock()
		if len(f.pendings) > 0 {
			todo, f.pendings = f.pendings[0], f.pendings[1:]
		}
		f.mu.Unlock()
		if todo == nil {
			select {
			case <-f.resume:
				continue
			case <-f.stopc:
				return
			}
		}
		todo()
	}
}

type kvStore struct {
	mu    sync.Mutex
	sched Scheduler
	rev   int
}

func (s *kvStore) Compact(rev int) {
	s.sched.Schedule(func() {
		s.mu.Lock()
		s.rev = rev
		s.mu.Unlock()
	})
}

// Restore stops the scheduler under the lock the queued compaction takes.
func (s *kvStore) Restore() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sched.Stop() // want `kvStore.mu \(taken at queued.go:\d+\) is held across a channel receive \(in fifo.Stop at queued.go:\d+\); the goroutine started by the go statement, running the function it was handed \(kvStore.Compact.func1\), which would unblock it, also takes kvStore.mu \[blocking-held\]`
	s.rev = 0
}

// A scheduler whose jobs take no lock of their owner's. Silent.
type counter struct {
	mu    sync.Mutex
	sched Scheduler
	n     int
	hits  chan int
}

func (c *counter) Tick() { c.sched.Schedule(func() { c.hits <- 1 }) }

func (c *counter) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sched.Stop()
	c.n = 0
}
