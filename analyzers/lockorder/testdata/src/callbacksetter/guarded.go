package callbacksetter

import "sync"

// Callbacks called behind a test that they are set, two hops deep (an
// ICE agent's state handler, set by the transport, calling the
// connection's handler): the nil tests are no condition on what the call
// does, so the agent's lock is ordered before the connection's, against
// the connection's Close, which stops the agent under its own lock.
type Agent struct {
	mu       sync.Mutex
	state    int
	onChange func(int)
}

func (a *Agent) OnChange(f func(int)) {
	a.mu.Lock()
	a.onChange = f
	a.mu.Unlock()
}

// update is called with a.mu held.
func (a *Agent) update(s int) {
	if a.state == s {
		return
	}
	a.state = s
	if h := a.onChange; h != nil {
		h(s)
	}
}

func (a *Agent) check(expired bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if expired {
		a.update(2)
	}
}

func (a *Agent) Close() {
	a.mu.Lock()
	a.state = 0
	a.mu.Unlock()
}

type Transport struct {
	agent   *Agent
	onState func(int)
}

func (t *Transport) Start(a *Agent) {
	t.agent = a
	a.OnChange(func(s int) {
		if h := t.onState; h != nil {
			h(s)
		}
	})
}

func (t *Transport) Stop() { t.agent.Close() }

type PeerConn struct {
	mu    sync.Mutex
	state int
	tr    *Transport
}

func NewPeerConn() *PeerConn {
	c := &PeerConn{}
	c.tr = &Transport{onState: c.setState}
	return c
}

func (c *PeerConn) setState(s int) {
	c.mu.Lock()
	c.state = s
	c.mu.Unlock()
}

func (c *PeerConn) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tr.Stop() // want `lock order inversion: Agent.mu then PeerConn.mu in Agent.check \(guarded.go:34 -> guarded.go:37 via Agent.update -> Transport.Start.func1 -> PeerConn.setState\) but PeerConn.mu then Agent.mu in PeerConn.Close \(guarded.go:82 -> guarded.go:84 via Transport.Stop -> Agent.Close\) \[lock-order\]`
}

// SafeConn stops the transport after its unlock: no order. Silent.
type SafeConn struct {
	mu    sync.Mutex
	state int
	tr    *Transport
}

func NewSafeConn() *SafeConn {
	c := &SafeConn{}
	c.tr = &Transport{onState: c.setState}
	return c
}

func (c *SafeConn) setState(s int) {
	c.mu.Lock()
	c.state = s
	c.mu.Unlock()
}

func (c *SafeConn) Close() {
	c.mu.Lock()
	c.state = -1
	c.mu.Unlock()
	c.tr.Stop()
}
