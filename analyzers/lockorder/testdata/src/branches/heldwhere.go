package branches

import "sync"

// A lock taken, its unlock deferred, under a test of a parameter (`if
// first {`) is held past the branch on the path where the parameter is
// true: what is taken after the branches merge is taken under it there.

type Proc struct {
	mu    sync.Mutex
	owner *Daemon
}

type Daemon struct {
	mu    sync.Mutex
	state string
}

// exited locks the process only for its first exit, then notifies the
// daemon: Proc.mu then Daemon.mu where first is true.
func (p *Proc) exited(first bool) {
	if first {
		p.mu.Lock()
		defer p.mu.Unlock()
	}
	p.owner.changed("exited")
}

func (d *Daemon) changed(s string) {
	d.mu.Lock()
	d.state = s
	d.mu.Unlock()
}

// kill holds the daemon while it signals the process.
func (d *Daemon) kill(p *Proc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p.mu.Lock() // want `lock order inversion: Proc.mu then Daemon.mu in Proc.exited \(heldwhere.go:23 -> heldwhere.go:26 via Daemon.changed, where first is true\) but Daemon.mu then Proc.mu in Daemon.kill \(heldwhere.go:37 -> heldwhere.go:39\) \[lock-order\]`
	p.mu.Unlock()
}

type Job struct {
	mu    sync.Mutex
	owner *Pool
}

type Pool struct {
	mu   sync.Mutex
	done int
}

// finish tests the parameter again to unlock: past the second test the
// lock is held on no path, so nothing after it is taken under it.
func (j *Job) finish(first bool) {
	if first {
		j.mu.Lock()
	}
	if first {
		j.mu.Unlock()
	}
	j.owner.mu.Lock()
	j.owner.done++
	j.owner.mu.Unlock()
}

// finishLater takes Pool.mu in a defer registered under the test: whether
// that defer runs is a guess, so it orders nothing.
func (j *Job) finishLater(first bool) {
	if first {
		j.mu.Lock()
		defer func() {
			j.owner.mu.Lock()
			j.owner.done++
			j.owner.mu.Unlock()
			j.mu.Unlock()
		}()
	}
}

func (p *Pool) cancel(j *Job) {
	p.mu.Lock()
	defer p.mu.Unlock()
	j.mu.Lock()
	j.mu.Unlock()
}

type Slot struct {
	mu      sync.Mutex
	owner   *Ring
	filling bool
}

type Ring struct {
	mu   sync.Mutex
	slot *Slot
}

// fill locks the slot where a flag read from shared state says so, a
// gate the two orders may be kept apart by: no edge from it.
func (s *Slot) fill() {
	s.owner.mu.Lock()
	start := !s.filling
	s.filling = true
	s.owner.mu.Unlock()
	if start {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	s.owner.mu.Lock()
	s.owner.mu.Unlock()
}

func (r *Ring) drain() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.slot.mu.Lock()
	r.slot.mu.Unlock()
}
