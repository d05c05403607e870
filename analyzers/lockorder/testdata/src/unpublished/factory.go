package unpublished

import "sync"

// A factory that returns a new object already locked takes a lock nobody
// else can hold: its caller's locks order nothing before it. Once the
// factory has published the object, the same take is an edge.
type Listener struct {
	mu       sync.Mutex
	acceptMu sync.Mutex
	pending  map[*Endpoint]bool
	all      []*Endpoint
}

type Endpoint struct {
	mu    sync.Mutex
	state int
}

func newEndpoint() *Endpoint { return &Endpoint{} }

// lockedEndpoint returns a new endpoint, locked; private until returned.
func lockedEndpoint() *Endpoint {
	n := newEndpoint()
	n.mu.Lock()
	return n
}

// publishedEndpoint adds the endpoint where others find it, then locks it.
func (l *Listener) publishedEndpoint() *Endpoint {
	n := newEndpoint()
	l.all = append(l.all, n)
	n.mu.Lock()
	return n
}

// handle: Listener.mu -> Listener.acceptMu here, and acceptMu ->
// Endpoint.mu only on a new endpoint. Silent.
func (l *Listener) handle() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acceptMu.Lock()
	defer l.acceptMu.Unlock()
	n := lockedEndpoint()
	l.pending[n] = true
	n.state = 1
	n.mu.Unlock()
}

// accept: acceptMu -> Endpoint.mu on a published endpoint, and close
// takes them the other way.
func (l *Listener) accept() {
	l.acceptMu.Lock()
	defer l.acceptMu.Unlock()
	n := l.publishedEndpoint()
	n.mu.Unlock()
}

func closeEndpoint(l *Listener, e *Endpoint) {
	e.mu.Lock()
	l.acceptMu.Lock() // want `lock order inversion: Listener.acceptMu then Endpoint.mu in Listener.accept \(factory.go:53 -> factory.go:55 via Listener.publishedEndpoint\) but Endpoint.mu then Listener.acceptMu in closeEndpoint \(factory.go:60 -> factory.go:61\) \[lock-order\]`
	l.acceptMu.Unlock()
	e.mu.Unlock()
}
