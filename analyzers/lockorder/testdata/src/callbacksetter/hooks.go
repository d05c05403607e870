package callbacksetter

import "sync"

// Hooks appended to a slice by a registration method and run under the
// lock, each given the object: the one function the package ever
// registers is what the loop calls (a sandbox running its remove hooks,
// one of which asks the sandbox for its containers).
type RemoveHook func(sb *Sandbox, id string)

type Sandbox struct {
	mu       sync.Mutex
	ids      map[string]bool
	onRemove []RemoveHook
}

func (sb *Sandbox) AddRemoveHook(h RemoveHook) {
	sb.mu.Lock()
	sb.onRemove = append(sb.onRemove, h)
	sb.mu.Unlock()
}

func (sb *Sandbox) Count() int {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return len(sb.ids)
}

func (sb *Sandbox) Remove(id string) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	delete(sb.ids, id)
	for _, h := range sb.onRemove {
		h(sb, id) // want `Sandbox.mu locked again by Server.onRemoved -> Sandbox.Count \(at hooks.go:24\) while held since hooks.go:30: self-deadlock \[double-lock\]`
	}
}

type Server struct {
	mu    sync.Mutex
	empty map[*Sandbox]bool
}

func (s *Server) onRemoved(sb *Sandbox, id string) {
	n := sb.Count()
	s.mu.Lock()
	s.empty[sb] = n == 0
	s.mu.Unlock()
}

func (s *Server) add(sb *Sandbox) { sb.AddRemoveHook(s.onRemoved) }

// Correct: the hooks run after the unlock, and a hook given its own
// server locks that server, not the holder.
type Pod struct {
	mu      sync.Mutex
	ids     map[string]bool
	onClose []func(p *Pod)
}

func (p *Pod) AddCloseHook(h func(p *Pod)) { p.onClose = append(p.onClose, h) }

func (p *Pod) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids)
}

func (p *Pod) Close() {
	p.mu.Lock()
	hooks := append([]func(*Pod){}, p.onClose...)
	p.ids = nil
	p.mu.Unlock()
	for _, h := range hooks {
		h(p)
	}
}

type Tracker struct {
	mu     sync.Mutex
	closed int
}

// seen is a method value: its receiver is the tracker it was taken from,
// not the pod it is given.
func (t *Tracker) seen(p *Pod) {
	t.mu.Lock()
	t.closed++
	t.mu.Unlock()
}

func (t *Tracker) watch(p *Pod) {
	p.AddCloseHook(t.seen)
	p.AddCloseHook(func(p *Pod) { _ = p.Len() })
}

// A method value stored in a field and called with the holder: its
// receiver is another object, so its lock is not the holder's.
type Feed struct {
	mu     sync.Mutex
	onItem func(f *Feed)
}

func (f *Feed) SetOnItem(h func(f *Feed)) { f.onItem = h }

func (f *Feed) Publish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onItem(f)
}

func (t *Tracker) follow(f *Feed) { f.SetOnItem(t.counted) }

func (t *Tracker) counted(f *Feed) {
	t.mu.Lock()
	t.closed++
	t.mu.Unlock()
}
