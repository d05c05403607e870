package main

import "sync"

// An interface method's own branches on its receiver's state (a once
// guard, a test that an action was set) are its choice to call what lies
// behind them: the stack's RemoveNIC holds s.mu closing the link
// endpoint, whose close action, set by the stack to remove the NIC, locks
// s.mu again (gVisor netstack's veth). A method branching on what it is
// passed (Shutdown's graceful flag) decides on data: silent, as the
// watcher branching on its event (feed and mirror, main.go).

type linkEndpoint interface {
	Close()
	SetOnCloseAction(func())
}

type pipe struct {
	mu     sync.Mutex
	closed bool
	ends   [2]*pipeEnd
}

type pipeEnd struct {
	mu      sync.Mutex
	pipe    *pipe
	onClose func()
}

func newPipe() (*pipeEnd, *pipeEnd) {
	p := &pipe{}
	a, b := &pipeEnd{pipe: p}, &pipeEnd{pipe: p}
	p.ends = [2]*pipeEnd{a, b}
	return a, b
}

func (e *pipeEnd) SetOnCloseAction(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onClose = f
}

// Close closes both ends and runs their close actions.
func (e *pipeEnd) Close() {
	e.pipe.mu.Lock()
	if e.pipe.closed {
		e.pipe.mu.Unlock()
		return
	}
	e.pipe.closed = true
	e.pipe.mu.Unlock()
	for _, end := range e.pipe.ends {
		end.mu.Lock()
		action := end.onClose
		end.mu.Unlock()
		if action != nil {
			action()
		}
	}
}

type netStack struct {
	mu   sync.Mutex
	nics map[int]linkEndpoint
}

func (s *netStack) CreateNIC(id int, ep linkEndpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nics[id] = ep
	ep.SetOnCloseAction(func() { s.RemoveNIC(id) })
}

func (s *netStack) RemoveNIC(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(id) // want `netStack.mu locked again by netStack.removeLocked -> pipeEnd.Close -> netStack.CreateNIC.func1 -> netStack.RemoveNIC \(at closeaction.go:75\), the same lock: the program makes one netStack \(at closeaction.go:138\), while held since closeaction.go:75: self-deadlock \[double-lock\]`
}

func (s *netStack) removeLocked(id int) {
	ep, ok := s.nics[id]
	if !ok {
		return
	}
	delete(s.nics, id)
	ep.Close()
}

type tunnel interface {
	Shutdown(graceful bool)
	SetOnShutdown(func())
}

type tunnelEnd struct {
	mu         sync.Mutex
	onShutdown func()
}

func (t *tunnelEnd) SetOnShutdown(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onShutdown = f
}

func (t *tunnelEnd) Shutdown(graceful bool) {
	t.mu.Lock()
	action := t.onShutdown
	t.mu.Unlock()
	if !graceful && action != nil {
		action()
	}
}

type router struct {
	mu   sync.Mutex
	tuns map[int]tunnel
}

func (r *router) Add(id int, t tunnel) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tuns[id] = t
	t.SetOnShutdown(func() { r.Drop(id) })
}

func (r *router) Drop(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tuns[id]
	if !ok {
		return
	}
	delete(r.tuns, id)
	t.Shutdown(true)
}

func runNetStack() {
	s := &netStack{nics: map[int]linkEndpoint{}}
	a, b := newPipe()
	s.CreateNIC(1, a)
	s.CreateNIC(2, b)
	s.RemoveNIC(1)

	r := &router{tuns: map[int]tunnel{}}
	r.Add(1, &tunnelEnd{})
	r.Drop(1)
}
