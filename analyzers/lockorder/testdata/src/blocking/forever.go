package blocking

import "sync"

// A goroutine that parks in `select {}` with a lock held never releases
// it: every other taker of that lock waits forever.
type Server struct {
	mu       sync.RWMutex
	services map[string]string
	serving  bool
}

func (s *Server) Serve() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serving = true
	select {} // want `Server.mu \(taken at forever.go:14\) is held across a select \{\}, which never returns: it is never released, and Server.Lookup also takes it \[blocking-held\]`
}

func (s *Server) Lookup(name string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.services[name]
}

// The correct counterpart: the flag is set under the lock, which is
// released before the server parks.
type Daemon struct {
	mu      sync.Mutex
	running bool
}

func (d *Daemon) Run() {
	d.mu.Lock()
	d.running = true
	d.mu.Unlock()
	select {}
}

func (d *Daemon) Running() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running
}
