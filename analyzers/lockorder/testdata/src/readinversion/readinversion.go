// Package readinversion: two locks taken in opposite orders deadlock
// only if each goroutine blocks on the other's hold. A read lock wanted
// while another goroutine read-holds it blocks only behind a waiting
// writer: with no writer of it, the inversion cannot deadlock there.
package readinversion

import "sync"

// Registry and Index are only ever read-locked by these two paths, and
// nothing write-locks Index.mu: the readers never queue. Silent.
type Registry struct {
	mu    sync.RWMutex
	index *Index
	names []string
}

type Index struct {
	mu   sync.RWMutex
	reg  *Registry
	keys map[string]int
}

func (r *Registry) Lookup(k string) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	r.index.mu.RLock()
	defer r.index.mu.RUnlock()
	return r.index.keys[k]
}

func (x *Index) Names() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	x.reg.mu.RLock()
	defer x.reg.mu.RUnlock()
	return x.reg.names
}

func (r *Registry) Add(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.names = append(r.names, name)
}

// Manager.mu is read-locked on both sides, but AddPort write-locks it: a
// writer queued between the two read locks blocks the second one, and
// the agent waits for the manager while the manager waits for the agent.
type Manager struct {
	mu    sync.RWMutex
	agent *Agent
	ports []int
}

type Agent struct {
	mu      sync.Mutex
	manager *Manager
	remotes []int
}

func (m *Manager) AddPort(p int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ports = append(m.ports, p)
}

func (m *Manager) Inbound(p int) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.agent.Valid(p)
}

func (a *Agent) Valid(p int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.remotes) > p
}

func (a *Agent) Ping() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.manager.mu.RLock() // want `lock order inversion: Manager.mu then Agent.mu in Manager.Inbound \(readinversion.go:\d+ -> readinversion.go:\d+ via Agent.Valid\) but Agent.mu then Manager.mu in Agent.Ping \(readinversion.go:\d+ -> readinversion.go:\d+\); Manager.mu is read-locked on both sides, so this blocks only behind a waiting writer \(Manager.AddPort write-locks it\) \[lock-order\]`
	defer a.manager.mu.RUnlock()
	return len(a.manager.ports)
}

// An exclusive hold on one side blocks any reader: no note needed.
type Left struct {
	mu    sync.RWMutex
	right *Right
	n     int
}

type Right struct {
	mu   sync.RWMutex
	left *Left
	n    int
}

func (l *Left) Sync() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.right.mu.RLock()
	l.n = l.right.n
	l.right.mu.RUnlock()
}

func (r *Right) Sync() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.left.mu.RLock() // want `lock order inversion: Left.mu then Right.mu in Left.Sync \(readinversion.go:\d+ -> readinversion.go:\d+\) but Right.mu then Left.mu in Right.Sync \(readinversion.go:\d+ -> readinversion.go:\d+\) \[lock-order\]`
	r.n = r.left.n
	r.left.mu.RUnlock()
}
