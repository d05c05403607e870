package blocking

import "sync"

// A helper called with its caller's lock held that lets it go while it
// waits and takes it back after (a handshake wait in a network stack):
// the caller does not wait holding it, whatever the goroutine that
// unblocks the wait takes.
type Endpoint struct {
	mu    sync.Mutex
	state int
	done  chan struct{}
	ready chan struct{}
}

func (e *Endpoint) Connect() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.state = 1
	go e.handshake()
	e.waitLocked()
}

// waitLocked is called with e.mu held and returns with it held.
func (e *Endpoint) waitLocked() {
	e.mu.Unlock()
	<-e.done
	e.mu.Lock()
}

func (e *Endpoint) handshake() {
	e.mu.Lock()
	e.state = 2
	e.mu.Unlock()
	close(e.done)
	close(e.ready)
}

// Waiting through a helper that keeps the lock is still a finding.
func (e *Endpoint) ConnectHeld() {
	e.mu.Lock()
	defer e.mu.Unlock()
	go e.handshake()
	e.waitReady() // want `Endpoint.mu \(taken at relockwait.go:41\) is held across a channel receive \(in Endpoint.waitReady at relockwait.go:48\); the goroutine started by the go statement, which would unblock it, also takes Endpoint.mu \[blocking-held\]`
}

func (e *Endpoint) waitReady() {
	<-e.ready
}
