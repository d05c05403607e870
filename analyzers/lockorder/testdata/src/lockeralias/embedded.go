package lockeralias

import "sync"

// A Cond made from a struct that embeds its mutex waits with that mutex:
// sync.NewCond(&s.mu), mu a struct{ sync.Mutex; ... }, is what s.mu.Lock()
// takes (cockroach's Stopper). Wait releases it: silent.
type Stopper struct {
	mu struct {
		sync.Mutex
		numTasks int
	}
	quiesce *sync.Cond
}

func NewStopper() *Stopper {
	s := &Stopper{}
	s.quiesce = sync.NewCond(&s.mu)
	return s
}

func (s *Stopper) taskDone() {
	s.mu.Lock()
	s.mu.numTasks--
	s.quiesce.Broadcast()
	s.mu.Unlock()
}

func (s *Stopper) RunTask(f func()) {
	s.mu.Lock()
	s.mu.numTasks++
	s.mu.Unlock()
	go func() {
		defer s.taskDone()
		f()
	}()
}

func (s *Stopper) Stop() {
	s.mu.Lock()
	for s.mu.numTasks > 0 {
		s.quiesce.Wait()
	}
	s.mu.Unlock()
}

// A Cond made from another embedded-mutex struct than the one held: Wait
// releases stateMu, not mu, and the task that would signal needs mu.
type Drainer struct {
	mu struct {
		sync.Mutex
		pending int
	}
	stateMu struct {
		sync.Mutex
		closed bool
	}
	drained *sync.Cond
}

func NewDrainer() *Drainer {
	d := &Drainer{}
	d.drained = sync.NewCond(&d.stateMu)
	return d
}

func (d *Drainer) finish() {
	d.mu.Lock()
	d.mu.pending--
	d.mu.Unlock()
	d.stateMu.Lock()
	d.drained.Broadcast()
	d.stateMu.Unlock()
}

func (d *Drainer) Start() {
	d.mu.Lock()
	d.mu.pending++
	d.mu.Unlock()
	go d.finish()
}

func (d *Drainer) Drain() {
	d.mu.Lock()
	d.stateMu.Lock()
	for d.mu.pending > 0 {
		d.drained.Wait() // want `Drainer.mu \(taken at embedded.go:\d+\) is held across a Cond.Wait; .* also takes Drainer.mu \[blocking-held\]`
	}
	d.stateMu.Unlock()
	d.mu.Unlock()
}
